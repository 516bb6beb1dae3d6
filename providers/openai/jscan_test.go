package openai

import (
	"encoding/json"
	"testing"
)

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
		got, ok := unquote([]byte(raw), &buf)
		if !ok || got != want {
			t.Errorf("unquote(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, bad := range []string{`"\x"`, `"\u12"`, `"\`, `x`, `"`, `"\uzzzz"`} {
		var buf []byte
		if _, ok := unquote([]byte(bad), &buf); ok {
			t.Errorf("unquote(%s) accepted", bad)
		}
	}
	// A lone surrogate becomes U+FFFD, as encoding/json does.
	var buf []byte
	if got, _ := unquote([]byte(`"\ud83d!"`), &buf); got != "\uFFFD!" {
		t.Errorf("lone surrogate = %q", got)
	}
}

func TestParseObjectStructure(t *testing.T) {
	valid := []string{
		`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}],"d":null,"e":true,"f":false,"g":-1.5e3} `,
		`{"s":"with \"quotes\" and ]}"}`,
	}
	for _, s := range valid {
		if err := parseObject([]byte(s), func(k, v []byte, kind byte) bool { return true }); err != nil {
			t.Errorf("parseObject(%s) = %v", s, err)
		}
	}
	invalid := []string{
		``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{"a":[1,2}`, `{"a":"x}`,
		`{"a":1}}`, `{"a":1} x`, `{"a":tru}`, `{a:1}`, `{"a":{"b":1}`,
	}
	for _, s := range invalid {
		if err := parseObject([]byte(s), func(k, v []byte, kind byte) bool { return true }); err == nil {
			t.Errorf("parseObject(%s) accepted", s)
		}
	}
	var keys []string
	_ = parseObject([]byte(`{"a":"x","b":{"c":[1]},"d":[{"e":1}]}`), func(k, v []byte, kind byte) bool {
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
