package jscan

import (
	"encoding/json"
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
