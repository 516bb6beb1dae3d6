package jscan

import (
	"encoding/json"
	"testing"
)

// FuzzValidValueEndAgreesWithValid holds the strict walk to json.Valid: a body is one valid JSON
// value exactly when ValidValueEnd walks all of it (space aside).
func FuzzValidValueEndAgreesWithValid(f *testing.F) {
	for _, s := range []string{
		`{}`, ` [ ] `, `{"a":1}`, `{"a":-0.5e+3,"b":[true,false,null,{"c":"\u00e9\n"}]}`, `01`, `1.`, `-`, `1e`, `-0`,
		`"\x"`, `"` + "\x01" + `"`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{"a":1}x`, `"s"`, `tru`, `nul`, `"\ud800"`,
		`[[[[{"a":[[]]}]]]]`, `{"a":{"b":"\"}`, `"\u12"`, `[1 2]`, `{1:2}`,
		// Long strings, walked eight bytes at a time: what stops the fast path at each offset.
		`"abcdefghijklmnopqrstuvwxyz0123456789"`, `"abcdefghijklmnopq\"rstuvwxyz"`, `"abcdefghijklmnop\\"`,
		"\"abcdefghijk\x1fmnopqrstuvwxyz\"", "\"abcdefghijklmnopqrstuvwxyz\x00\"", `"é日本語テキストの長い文字列です"`,
		"\"abcdefghijklmnopqrstuvw\x7f\xff\x80\"", `{"k":"abcdefghijklmnopqrstuvwxyz","l":"0123456789abcdef"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		i := SkipWS(body, 0)
		end := ValidValueEnd(body, i)
		got := end >= 0 && SkipWS(body, end) == len(body)
		if want := json.Valid(body); got != want {
			t.Fatalf("ValidValueEnd(%q) = %d, json.Valid says %v", body, end, want)
		}
	})
}

// Every byte at every place of a long string: the eight-byte walk stops where the byte walk
// would (a quote, a backslash, a control character) and nowhere else.
func TestValidStringEndEveryByte(t *testing.T) {
	for at := 1; at < 20; at++ {
		for c := 0; c < 256; c++ {
			body := []byte(`"abcdefghijklmnopqrstuvwxyz"`)
			body[at] = byte(c)
			i := ValidValueEnd(body, 0)
			got := i >= 0 && SkipWS(body, i) == len(body)
			if want := json.Valid(body); got != want {
				t.Fatalf("byte %#x at %d: ValidValueEnd %d, json.Valid %v", c, at, i, want)
			}
		}
	}
}

// The depth limit is encoding/json's: one more level than MaxDepth is refused by both.
func TestValidValueEndDepthLimit(t *testing.T) {
	for _, n := range []int{MaxDepth, MaxDepth + 1} {
		b := make([]byte, 0, 2*n)
		for range n {
			b = append(b, '[')
		}
		for range n {
			b = append(b, ']')
		}
		if got, want := ValidValueEnd(b, 0) == len(b), json.Valid(b); got != want {
			t.Errorf("depth %d: ValidValueEnd accepts %v, json.Valid %v", n, got, want)
		}
	}
}
