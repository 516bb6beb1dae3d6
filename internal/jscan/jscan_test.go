package jscan

import (
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"
)

func TestMembersAndElements(t *testing.T) {
	d := []byte(` {"a": [1, {"b": "x\"y"}, null], "c" : true, "d":{"e":-2.5e3}} `)
	var got []string
	end, err := EachMember(d[1:], func(key, val []byte, kind byte) bool {
		got = append(got, fmt.Sprintf("%s=%s(%c)", key, val, kind))
		return true
	})
	if err != nil || end != len(d)-2 {
		t.Fatalf("end %d err %v", end, err)
	}
	if fmt.Sprint(got) != `[a=[1, {"b": "x\"y"}, null]([) c=true(t) d={"e":-2.5e3}({)]` {
		t.Errorf("got %v", got)
	}
	var elems []string
	if err := EachElement([]byte(`[1, {"b": "x"}, null]`), func(val []byte, kind byte) bool {
		elems = append(elems, string(val))
		return true
	}); err != nil || fmt.Sprint(elems) != `[1 {"b": "x"} null]` {
		t.Errorf("elements %v err %v", elems, err)
	}
	for _, bad := range []string{`{"a":}`, `{"a" 1}`, `{"a":1,}`, `{"a":"x`, `{"a":[1,2}`, `[`, `{"a":1} x`} {
		if ParseObject([]byte(bad), func(key, val []byte, kind byte) bool { return true }) == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "42": 42, "-7": -7} {
		if n, ok := ParseInt([]byte(in)); !ok || n != want {
			t.Errorf("%s: %d %v", in, n, ok)
		}
	}
	for _, in := range []string{"", "-", "1.5", "1e3", "1234567890123456789", "x"} {
		if _, ok := ParseInt([]byte(in)); ok {
			t.Errorf("%s accepted", in)
		}
	}
}

// FuzzUnquote requires Unquote to agree with encoding/json on every string literal the latter
// accepts (escapes, surrogate pairs, lone surrogates turned into U+FFFD).
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\nb\t\"c\"\\"`, `"\u00e9\ud83d\ude00"`, `"\ud800x"`, `"\udc00\ud800"`, `"\/"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, lit string) {
		var want string
		if json.Unmarshal([]byte(lit), &want) != nil || len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
			return
		}
		var buf []byte
		got, ok := Unquote([]byte(lit), &buf)
		if !ok {
			t.Fatalf("%q refused, encoding/json gives %q", lit, want)
		}
		if got != want && fixUTF8(got) != want {
			t.Fatalf("%q: got %q, want %q", lit, got, want)
		}
	})
}

// fixUTF8 mirrors httpsse.FixUTF8 (which the dialects apply after Unquote) without importing it.
func fixUTF8(s string) string {
	var b []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += n
	}
	return string(b)
}

// TestCanonicalMatchesLikeEncodingJSON holds Canonical to encoding/json's key matching: exact
// first, then case-insensitive, with escaped keys compared unescaped.
func TestCanonicalMatchesLikeEncodingJSON(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{`text`, "text"},
		{`Text`, "text"},
		{`THOUGHT`, "thought"},
		{`t\u0065xt`, "text"},
		{`t\u00`, ""},
		{`role`, ""},
		{``, ""},
	} {
		if got := Canonical([]byte(c.key), "text", "thought"); got != c.want {
			t.Errorf("Canonical(%q) = %q, want %q", c.key, got, c.want)
		}
		var v struct {
			Text    int `json:"text"`
			Thought int `json:"thought"`
		}
		if json.Unmarshal([]byte(`{"`+c.key+`":1}`), &v) == nil && (v.Text == 1) != (c.want == "text") {
			t.Errorf("encoding/json disagrees on %q", c.key)
		}
	}
}
