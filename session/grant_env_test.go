package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// The editors show rawInput.env (an object) and rawInput.stdin (a string) on a program's card;
// the content block says the same for a client that shows only content.
func TestPermissionRequestCarriesEnvAndStdin(t *testing.T) {
	h := newHarness(t)
	h.newSession()
	s, _ := h.m.get(h.sid)
	tr := &turn{s: s, ctx: context.Background()}
	c := &call{id: "x", name: "run_program", final: json.RawMessage(`{}`)}
	req := tools.PermissionRequest{Title: "Run", Kind: protocol.KindExecute, Command: []string{"python3", "-"},
		Env: map[string]string{"LD_PRELOAD": "/tmp/evil.so", "X": "a\u202eb"}, Stdin: "print(1)\n"}
	u := tr.toolCallShape(c, req)
	var raw struct {
		Env   map[string]string `json:"env"`
		Stdin string            `json:"stdin"`
	}
	if err := json.Unmarshal(u.RawInput, &raw); err != nil || raw.Env["LD_PRELOAD"] != "/tmp/evil.so" || raw.Stdin != "print(1)\n" {
		t.Fatalf("rawInput = %s (%v)", u.RawInput, err)
	}
	if len(u.ToolContent) != 1 || u.ToolContent[0].Content == nil {
		t.Fatalf("content = %+v", u.ToolContent)
	}
	text := u.ToolContent[0].Content.Text
	for _, want := range []string{"LD_PRELOAD=/tmp/evil.so", `X="a\u202eb"`, "print(1)"} {
		if !strings.Contains(text, want) {
			t.Errorf("content lacks %q:\n%s", want, text)
		}
	}
	// A call without either carries neither.
	u = tr.toolCallShape(c, tools.PermissionRequest{Title: "Run", Command: []string{"true"}})
	if strings.Contains(string(u.RawInput), "env") || strings.Contains(string(u.RawInput), "stdin") || len(u.ToolContent) != 0 {
		t.Fatalf("plain call: rawInput %s content %+v", u.RawInput, u.ToolContent)
	}
}
