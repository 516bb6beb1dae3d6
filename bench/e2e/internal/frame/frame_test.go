package frame

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// What Append frames, Read gives back, in both framings, message after message; a header
// without Content-Length is an error.
func TestRoundTrip(t *testing.T) {
	bodies := []string{`{"a":1}`, `{}`, `{"text":"line\\nbreak é"}`}
	for _, ndjson := range []bool{false, true} {
		var stream []byte
		for _, b := range bodies {
			stream = Append(stream, []byte(b), ndjson)
		}
		r := bufio.NewReader(bytes.NewReader(stream))
		for _, want := range bodies {
			got, err := Read(r, ndjson)
			if err != nil || string(got) != want {
				t.Fatalf("ndjson %v: %q, %v; want %q", ndjson, got, err, want)
			}
		}
		if _, err := Read(r, ndjson); err != io.EOF {
			t.Errorf("ndjson %v: after the last message %v, want EOF", ndjson, err)
		}
	}
	if _, err := Read(bufio.NewReader(bytes.NewReader([]byte("X-Other: 1\r\n\r\n{}"))), false); err == nil {
		t.Error("a frame without Content-Length was read")
	}
}
