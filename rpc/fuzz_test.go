package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentd-dev/agentd/jsonrpc"

	"github.com/agentd-dev/agentd/protocol"
)

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
		var we *jsonrpc.WireError
		if !errors.As(err, &we) {
			// errors from the fake engine and the provider source are plain errors the server
			// maps; they must map to a JSON-RPC error too.
			we2 := s.wireError(name, err)
			if !errors.As(we2, &we) {
				t.Fatalf("%s %q: unmapped error %v", name, params, err)
			}
			return
		}
		if we.Code == jsonrpc.InvalidParams {
			var data struct{ Field string }
			if len(we.Data) > 0 && json.Unmarshal(we.Data, &data) == nil && data.Field == "" {
				t.Fatalf("%s %q: invalid params without a field: %s", name, params, we.Message)
			}
		}
	})
}
