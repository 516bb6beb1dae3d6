package jsonrpc

import (
	"encoding/json"
)

// marshal is encoding/json for params and results: the wire types are tagged for it (omitempty,
// case-insensitive matching). Its output escapes HTML characters exactly as
// protocol.AppendSessionUpdate does, so every payload agentd writes follows one set of escaping
// rules. Raw messages pass through untouched; nil, and a value that encodes as null, give no
// bytes (no params member; a null result).
func marshal(v any) ([]byte, error) {
	var b []byte
	switch r := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		b = r
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	return b, nil
}

// unmarshalResult decodes an answer's result into v (nil: discarded). A raw message receives
// the bytes as they are; any other v is left untouched by an absent or null result.
func unmarshalResult(data []byte, v any) error {
	switch r := v.(type) {
	case nil:
		return nil
	case *json.RawMessage:
		*r = append(json.RawMessage(nil), data...)
		return nil
	}
	if len(data) == 0 || string(data) == "null" {
		return nil
	}
	return json.Unmarshal(data, v)
}
