package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/agentd-dev/agentd/rpc/protocol"
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
		r := newBufReader(bytes.NewReader(data))
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
				if jsonrpc2.AppendMessage(nil, reply) == nil {
					t.Fatal("reply does not encode")
				}
			}
		}
	})
}

// FuzzParams runs every method's decoding and validation on arbitrary params: a bad value is
// an invalid-params error naming a field, never a panic and never another kind of failure.
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"cwd":"/a","additionalDirectories":["/b",1]}`,
		`{"sessionId":"s1","prompt":[{"type":"text","text":"hi"},{"type":"image"}]}`,
		`{"sessionId":1}`, `{"providerId":"x","apiType":"openai","baseUrl":"http://10.0.0.1/v1","headers":{"A B":"c"}}`,
		`{"sessionId":"s","configId":"mode","value":"auto"}`, `{"cwd":"/a","mcpServers":[1]}`,
		`{"prompt":[{"type":"resource","resource":{}}],"sessionId":"x"}`, `{"a":1}   x`,
	} {
		for m := range 12 {
			f.Add(uint8(m), []byte(seed))
		}
	}
	methods := []string{
		protocol.MethodSessionNew, protocol.MethodSessionLoad, protocol.MethodSessionResume, protocol.MethodSessionList,
		protocol.MethodSessionClose, protocol.MethodSessionDelete, protocol.MethodSessionPrompt, protocol.MethodSessionSetConfigOption,
		protocol.MethodProvidersList, protocol.MethodProvidersSet, protocol.MethodProvidersTest, protocol.MethodSessionNew,
	}
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		s := NewServer(Options{})
		s.sessions = &fakeSessions{}
		name := methods[int(which)%len(methods)]
		m := s.methods[name]
		_, err := m.call(s, context.Background(), params)
		if err == nil {
			return
		}
		var we *jsonrpc2.Error
		if !errors.As(err, &we) {
			// errors from the fake engine and the provider source are plain errors the server
			// maps; they must map to a JSON-RPC error too.
			we2 := s.wireError(name, err)
			if !errors.As(we2, &we) {
				t.Fatalf("%s %q: unmapped error %v", name, params, err)
			}
			return
		}
		if we.Code == jsonrpc2.InvalidParams {
			var data struct{ Field string }
			if len(we.Data) > 0 && json.Unmarshal(we.Data, &data) == nil && data.Field == "" {
				t.Fatalf("%s %q: invalid params without a field: %s", name, params, we.Message)
			}
		}
	})
}
