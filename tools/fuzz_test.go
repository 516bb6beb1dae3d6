package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzToolArgs feeds arbitrary arguments to every tool: each answer must be a result, never a
// panic caught as an internal error. Mutating tools run with permission denied, so the fuzzer
// never writes or runs anything.
func FuzzToolArgs(f *testing.F) {
	for _, seed := range []string{
		`{"path": "a.go"}`, `{"path": "a.go", "start_line": 2, "end_line": 1}`, `{"pattern": "(?i)x", "include": ["*.go"]}`,
		`{"pattern": "[", "literal": true}`, `{"query": "A", "kind": "function"}`, `{"path": "../x", "edits": [{"old_text": "a", "new_text": "b"}]}`,
		`{"command": ["ls"], "env": {"A": "b"}}`, `{"ecosystem": "go", "action": "require"}`, `{"depth": 1e400}`, `{"max_results": -1}`,
		`{"path": "\u0000"}`, `[]`, `"x"`, `{"path": {"a": 1}}`, `{"edits": [null]}`,
	} {
		for _, tl := range Default().List() {
			f.Add(tl.Name(), seed)
		}
	}
	reg := Default()
	f.Fuzz(func(t *testing.T, name, args string) {
		tl, ok := reg.Lookup(name)
		if !ok {
			return
		}
		h := newHarness(t, map[string]string{"a.go": "package a\n\nfunc A() {}\n"})
		h.deny = true
		r := tl.Run(context.Background(), h.env, json.RawMessage(args))
		if strings.Contains(r.Output, "internal error") {
			t.Fatalf("%s(%s) panicked: %s", name, args, r.Output)
		}
		if !r.IsError && len(h.asked) > 0 {
			t.Fatalf("%s(%s) went ahead although permission was denied: %s", name, args, r.Output)
		}
		if tl.Effect() == EffectRead && len(h.asked) > 0 {
			t.Fatalf("read tool %s asked for permission", name)
		}
		_ = tl.Title(json.RawMessage(args))
	})
}
