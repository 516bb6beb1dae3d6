package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/agentd-dev/agentd/internal/jscan"
)

// FuzzReadFrame feeds arbitrary bytes to the frame reader and the message decoder: they may
// reject input, never panic, never return a body longer than declared, and a rejected JSON
// message always yields an answer that encodes.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("content-length: 46\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}"))
	f.Add([]byte("Content-Length: 17\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"id\":1,\"x\":[1]}"))
	f.Add([]byte("Content-Length: 999999999\r\n\r\n{"))
	f.Add([]byte("Content-Length: -1\r\n\r\n"))
	f.Add([]byte("Content-Length: 2\r\n\r\n[]Content-Length: 4\r\n\r\nnull"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for range 8 {
			body, err := ReadFrame(r, nil, 1<<20)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, ErrMalformedFrame) {
					t.Fatalf("unexpected error kind %T: %v", err, err)
				}
				return
			}
			if len(body) > 1<<20 {
				t.Fatalf("body of %d bytes over the limit", len(body))
			}
			msg, reply, err := decodeFrame(body)
			switch {
			case err == nil && msg == nil:
				t.Fatal("no message and no error")
			case err != nil && reply != nil:
				if !json.Valid(appendResponse(nil, reply.id, nil, reply.err)) {
					t.Fatal("reply does not encode")
				}
			}
		}
	})
}

// FuzzScanAgreesWithValid holds the one-pass scanner to json.Valid: it accepts exactly the
// bodies that are one valid JSON object, so a body it refuses is answered -32700 and one it
// accepts decodes.
func FuzzScanAgreesWithValid(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+3,"b":[true,false,null,{"c":"\u00e9\n"}]}`, `{"a":01}`, `{"a":1.}`,
		`{"a":"\x"}`, `{"a":"` + "\x01" + `"}`, `{"a":[1,]}`, `{"a":1,}`, `{"a" 1}`, `{"a":1}x`, `[]`, `"s"`, `{"a":tru}`,
		`{"a":"\ud800"}`, `{"a":{"b":{"c":[[[]]]}}}`, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"k":"v"}}`, `{"a":1e}`, `{"a":-}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fl fields
		got := scanObject(body, &fl)
		i := jscan.SkipWS(body, 0)
		want := json.Valid(body) && i < len(body) && body[i] == '{'
		if got != want {
			t.Fatalf("scanObject(%q) = %v, json.Valid says %v", body, got, want)
		}
	})
}

// An invalid request is answered under the id it carries, and with a null id when it carries
// null or none (jsonrpc2's ParseID read null as the string id "").
func TestInvalidRequestAnswerID(t *testing.T) {
	for body, want := range map[string]string{
		`{"id":null,"method":"x"}`:     "null",
		`{"method":"x"}`:               "null",
		`{"id":7,"method":"x"}`:        "7",
		`{"id":"a\"b","method":"x"}`:   `"a\"b"`,
		`{"jsonrpc":"1.0","id":-3}`:    "", // a broken response: not answered
		`{"jsonrpc":"2.0","id":[1]}`:   "null",
		`{"jsonrpc":"2.0","method":1}`: "null",
	} {
		_, reply, err := decodeFrame([]byte(body))
		if err == nil {
			t.Fatalf("%s decoded", body)
		}
		got := ""
		if reply != nil {
			got = string(reply.id.appendTo(nil))
		}
		if got != want {
			t.Errorf("%s answered with id %q, want %q", body, got, want)
		}
	}
}
