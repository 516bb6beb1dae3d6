package jscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// These cases came with the scanner from the openai dialect.

func TestUnquoteMatchesEncodingJSON(t *testing.T) {
	for _, raw := range []string{
		`""`, `"plain"`, `"Olá"`, `"a\"b"`, `"back\\slash"`, `"\\\""`, `"\/\b\f\n\r\t"`,
		`"\u00e9\u4e16"`, `"\ud83d\ude00 smile"`, `"{\"name\": \"test\", \"version\": \"1.0.0\"}"`,
		`"tab\tand\\n literal"`,
	} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var buf []byte
		got, ok := Unquote([]byte(raw), &buf)
		if !ok || got != want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, bad := range []string{`"\x"`, `"\u12"`, `"\`, `x`, `"`, `"\uzzzz"`} {
		var buf []byte
		if _, ok := Unquote([]byte(bad), &buf); ok {
			t.Errorf("Unquote(%s) accepted", bad)
		}
	}
	// A lone surrogate becomes U+FFFD, as encoding/json does.
	var buf []byte
	if got, _ := Unquote([]byte(`"\ud83d!"`), &buf); got != "\uFFFD!" {
		t.Errorf("lone surrogate = %q", got)
	}
}

func TestParseObjectStructure(t *testing.T) {
	valid := []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}],"d":null,"e":true,"f":false,"g":-1.5e3} `,
		`{"s":"with \"quotes\" and ]}"}`,
	}
	for _, s := range valid {
		if err := ParseObject([]byte(s), func(k, v []byte, kind byte) bool { return true }); err != nil {
			t.Errorf("ParseObject(%s) = %v", s, err)
		}
	}
	invalid := []string{
		``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":[1,2}`, `{"a":"x}`,
		`{"a":1}}`, `{"a":1} x`, `{"a":tru}`, `{a:1}`, `{"a":{"b":1}`,
	}
	for _, s := range invalid {
		if err := ParseObject([]byte(s), func(k, v []byte, kind byte) bool { return true }); err == nil {
			t.Errorf("ParseObject(%s) accepted", s)
		}
	}
	var keys []string
	_ = ParseObject([]byte(`{"a":"x","b":{"c":[1]},"d":[{"e":1}]}`), func(k, v []byte, kind byte) bool {
		keys = append(keys, string(k)+"="+string(v)+"/"+string(kind))
		return true
	})
	want := `[a="x"/" b={"c":[1]}/{ d=[{"e":1}]/[]`
	if got := jsonList(keys); got != want {
		t.Errorf("members %s, want %s", got, want)
	}
}

func jsonList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

// referenceStringEnd is the plain IndexByte version StringEnd started as.
func referenceStringEnd(d []byte, i int) int {
	start := i + 1
	for j := start; ; {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			return -1
		}
		k += j
		n := 0
		for b := k - 1; b >= start && d[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		j = k + 1
	}
}

// TestStringEndAroundTheShortLoop compares StringEnd with the reference for every tail of up to 7
// bytes over {a, \, "} after prefixes that put it across the byte loop's limit, with and without
// a run of backslashes just before the limit.
func TestStringEndAroundTheShortLoop(t *testing.T) {
	var tail []byte
	var rec func(n int)
	rec = func(n int) {
		for pre := shortString - 8; pre <= shortString+8; pre++ {
			for _, head := range []string{strings.Repeat("a", pre), strings.Repeat("a", pre-3) + `\\\`} {
				d := append([]byte(`"`+head), tail...)
				if got, want := StringEnd(d, 0), referenceStringEnd(d, 0); got != want {
					t.Fatalf("StringEnd(%q) = %d, want %d", d, got, want)
				}
			}
		}
		if n == 0 {
			return
		}
		for _, c := range []byte{'a', '\\', '"'} {
			tail = append(tail, c)
			rec(n - 1)
			tail = tail[:len(tail)-1]
		}
	}
	rec(7)
}
