package providers

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
)

// ToolsJSON keeps a dialect's encoding of the last tool set it sent: a session sends the same
// tools with every request, and their descriptions and schemas are most of its bytes (about 20 KB
// of the 25 KB of a first request with agentd's own tools). The zero value is ready; it is safe
// for concurrent use.
type ToolsJSON struct {
	last atomic.Pointer[encodedTools]
}

type encodedTools struct {
	specs []ToolSpec // a copy, schemas included
	json  []byte
}

// Encode returns the encoding of specs: the one kept when specs are the same tools as last time
// (compared by content: strings that share their bytes compare at once, so the same specs sent
// again cost a few comparisons and one memcmp per schema), else encode's, which is kept.
func (c *ToolsJSON) Encode(specs []ToolSpec, encode func() ([]byte, error)) ([]byte, error) {
	if t := c.last.Load(); t != nil && sameSpecs(t.specs, specs) {
		return t.json, nil
	}
	b, err := encode()
	if err != nil {
		return nil, err
	}
	own := make([]ToolSpec, len(specs))
	for i, s := range specs {
		own[i] = ToolSpec{Name: s.Name, Description: s.Description, Schema: bytes.Clone(s.Schema)}
	}
	c.last.Store(&encodedTools{specs: own, json: b})
	return b, nil
}

func sameSpecs(a, b []ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Schema, b[i].Schema) {
			return false
		}
	}
	return true
}

// MarshalWithTools is json.Marshal(body), byte for byte, where slot points at body's tools member:
// the tools are encoded by c once per tool set (specs) and spliced in where the encoder put a
// one-tool placeholder, which mark turns into by naming it with ToolsMarker.
func MarshalWithTools[T any](c *ToolsJSON, specs []ToolSpec, body any, slot *[]T, mark func(string) T) ([]byte, error) {
	tools, err := c.Encode(specs, func() ([]byte, error) { return json.Marshal(*slot) })
	if err != nil {
		return nil, err
	}
	*slot = []T{mark(ToolsMarker())}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	ph, err := json.Marshal(*slot)
	if err != nil {
		return nil, err
	}
	return SpliceJSON(b, ph, tools)
}

// ToolsMarker is the name of the placeholder tool. A raw JSON value of the body (the model's
// tool input, which Anthropic's dialect sends as it came) could otherwise hold the placeholder's
// very encoding ahead of the tools and take their place, so the marker ends in a nonce drawn at
// first use that nothing outside this process knows.
var ToolsMarker = sync.OnceValue(func() string { return "\x00agentd:tools:" + rand.Text() })

// SpliceJSON returns body with placeholder replaced by value. The placeholder is the encoding of a
// value that holds quotes outside any string (an array of one object), so it cannot occur inside
// an encoded string: what is found is the value the body was encoded with in its place.
func SpliceJSON(body, placeholder, value []byte) ([]byte, error) {
	i := bytes.Index(body, placeholder)
	if i < 0 {
		return nil, errors.New("placeholder not found in the encoded body")
	}
	out := make([]byte, 0, len(body)-len(placeholder)+len(value))
	out = append(out, body[:i]...)
	out = append(out, value...)
	return append(out, body[i+len(placeholder):]...), nil
}
