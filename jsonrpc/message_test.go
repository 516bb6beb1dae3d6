package jsonrpc

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// The envelope is written as encoding/json writes strings, whatever a method, a string id or an
// error message holds: an error message that quotes a client's bytes (a session id that is not
// UTF-8, a control character) still makes a frame every JSON parser reads, with the same text.
func TestEnvelopeStringsAreWellFormedJSON(t *testing.T) {
	hostile := "bad \xff\xfe id \x00\x1b[2J <script>&\u2028\"\\"
	frames := map[string][]byte{
		"answer":       appendResponse(nil, NewStringID(hostile), nil, &WireError{Code: InvalidParams, Message: "unknown session " + hostile}),
		"call":         appendCall(nil, NewStringID(hostile), hostile, []byte(`{}`)),
		"notification": appendNotification(nil, hostile, nil),
	}
	for name, b := range frames {
		if !utf8.Valid(b) || !json.Valid(b) {
			t.Fatalf("%s: not well-formed JSON in UTF-8: %q", name, b)
		}
		want, _ := json.Marshal(utf8Fixed(hostile))
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		got := []any{m["method"]}
		if name == "answer" {
			got = []any{m["id"], m["error"].(map[string]any)["message"].(string)[len("unknown session "):]}
		}
		for _, v := range got {
			if g, _ := json.Marshal(v); string(g) != string(want) {
				t.Errorf("%s: decoded %s, want %s", name, g, want)
			}
		}
	}
}

// utf8Fixed is s as encoding/json reads it back: invalid bytes become U+FFFD.
func utf8Fixed(s string) string {
	var b []byte
	b, _ = json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}
