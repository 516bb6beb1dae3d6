package acpdoor_test

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/internal/test/testbin"
)

// usageCosts are the cost objects of the usage_update notifications among lines, in order (nil
// for an update without one).
func usageCosts(t *testing.T, lines [][]byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "session/update" || m.Params.Update["sessionUpdate"] != "usage_update" {
			continue
		}
		cost, _ := m.Params.Update["cost"].(map[string]any)
		out = append(out, cost)
	}
	return out
}

// TestACPCostMatchesTheSchema: with a price for the model in the user's settings, the ACP
// door's usage_update carries cost {amount, currency} as ACP v1 says, cumulative over the
// session (one priced call of 1000 input at 2 and 100 output at 10 per million adds exactly
// 0.003), shown again on session/load; every message matches the schema.
func TestACPCostMatchesTheSchema(t *testing.T) {
	schema := loadSchema(t)
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	root, env := scriptedProject(t, "Cost", "costed",
		map[string]any{"text": "Said.", "stopReason": "end_turn", "usage": map[string]any{"input": 1000, "output": 100}})
	priced(t, root, map[string]any{"input": 2, "output": 10})
	c := startRaw(t, bin, root, env, editorAnswers(t))
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "cost-test", "version": "1"},
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}})
	c.call("authenticate", map[string]any{"methodId": "agentd-key"})
	ns := c.call("session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if ns.Error != nil || json.Unmarshal(ns.Result, &sess) != nil || sess.SessionID == "" {
		t.Fatalf("session/new = %s %+v", ns.Result, ns.Error)
	}
	for _, text := range []string{"Fix a.txt and run echo.", "Say it."} {
		if a := c.call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}); a.Error != nil || !strings.Contains(string(a.Result), `"stopReason":"end_turn"`) {
			t.Fatalf("prompt %q = %s %+v", text, a.Result, a.Error)
		}
	}
	titled := func() bool { return bytes.Contains(bytes.Join(c.lines, nil), []byte(`"session_info_update"`)) }
	for deadline := time.Now().Add(5 * time.Second); !titled() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		c.call("session/list", map[string]any{})
	}
	costs := usageCosts(t, c.lines)
	// Five model calls of the two turns, and the title request after the first exchange, which
	// the session pays for too (its update may come anywhere after the first turn's).
	if len(costs) != 6 {
		t.Fatalf("%d usage updates, want one per model call (5) and one for the title: %v", len(costs), costs)
	}
	prev := 0.0
	var said bool
	for i, cost := range costs {
		amount, ok := cost["amount"].(float64)
		if !ok || cost["currency"] != "USD" || amount <= prev {
			t.Fatalf("usage_update %d cost = %v, want a growing USD amount", i, cost)
		}
		said = said || math.Abs(amount-prev-0.003) < 1e-12
		prev = amount
	}
	if !said {
		t.Errorf("no call added 0.003, the price of the last turn's 1000 tokens in and 100 out: %v", costs)
	}
	n := len(c.lines)
	c.call("session/load", map[string]any{"sessionId": sess.SessionID, "cwd": root, "mcpServers": []any{}})
	if got := usageCosts(t, c.lines[n:]); len(got) != 1 || got[0]["amount"] != prev {
		t.Errorf("session/load showed costs %v, want the session's %v", got, prev)
	}
	checkAll(t, schema, c)
}
