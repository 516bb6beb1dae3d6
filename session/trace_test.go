package session

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

func TestTraceRecordsEveryStepWithSecretsRedacted(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: []providers.Event{
		{Type: providers.EventTextDelta, Text: "my key is sk-abcdefghijklmnop, token=hunter2222"},
		{Type: providers.EventCompleted, StopReason: providers.StopEndTurn},
	}})
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	h.set.Trace = path
	_ = h.m.Shutdown(t.Context())
	h.m = h.manager()
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.newSession()
	h.prompt("edit")
	_ = h.m.Shutdown(t.Context())

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	var all strings.Builder
	for sc.Scan() {
		var ev struct {
			Kind    string `json:"kind"`
			Session string `json:"session"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not JSONL: %q", sc.Text())
		}
		if ev.Session != h.sid {
			t.Fatalf("event without its session: %s", sc.Text())
		}
		seen[ev.Kind] = true
		all.WriteString(sc.Text())
	}
	for _, k := range []string{"prompt", "provider", "tool_call", "permission", "tool_result", "turn_end"} {
		if !seen[k] {
			t.Errorf("no %q event in the trace", k)
		}
	}
	if strings.Contains(all.String(), "sk-abcdefghijklmnop") || strings.Contains(all.String(), "hunter2222") {
		t.Fatalf("secret in the trace: %s", all.String())
	}
}
