package jsonrpc

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	long := `{"x":"` + strings.Repeat("a", 20000) + `"}`
	in := "{\"a\":1}\n\n  \r\n{\"b\":2}\r\n" + long + "\n{\"last\":true}"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	var got []string
	var buf []byte
	for {
		b, err := ReadLine(r, buf, 1<<20)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
		buf = b
	}
	want := []string{`{"a":1}`, `{"b":2}`, long, `{"last":true}`}
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %.40q, want %.40q", i, got[i], want[i])
		}
	}
}

func TestReadLineLimit(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100)+"\n{}\n"), 16)
	if _, err := ReadLine(r, nil, 50); !errors.Is(err, ErrMalformedFrame) {
		t.Fatalf("over-long line: err = %v, want a malformed frame", err)
	}
}

// TestNDJSONStream writes and reads whole lines, translated both ways, and answers a line that is
// not JSON without losing the next one.
func TestNDJSONStream(t *testing.T) {
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	s := NewStream(cr, sw, nil)
	s.ndjson = true
	s.translate = func(incoming bool, body []byte) []byte {
		return []byte(strings.Replace(string(body), `"method":"a"`, `"method":"b"`, 1))
	}
	defer s.Close()
	go func() {
		io.WriteString(cw, "not json\n{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n")
	}()
	out := bufio.NewReader(sr)
	msg, err := s.read()
	if err != nil {
		t.Fatal(err)
	}
	if n := &msg.req; !msg.isReq || n.IsCall() || n.Method() != "b" {
		t.Fatalf("read %#v", msg)
	}
	line, err := out.ReadString('\n')
	if err != nil || !strings.Contains(line, `-32700`) || strings.Count(line, "\n") != 1 {
		t.Fatalf("answer to a line that is not JSON = %q, %v", line, err)
	}
	if err := s.writeNotification("a", nil); err != nil {
		t.Fatal(err)
	}
	line, err = out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "{") || !strings.Contains(line, `"method":"b"`) || strings.Contains(line, "Content-Length") {
		t.Fatalf("written line = %q, %v", line, err)
	}
	cw.Close()
}
