package session

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

func planArgs(entries ...protocol.PlanEntry) string {
	b, _ := json.Marshal(map[string]any{"entries": entries})
	return string(b)
}

func plans(us []protocol.SessionUpdate) [][]protocol.PlanEntry {
	var out [][]protocol.PlanEntry
	for _, u := range kinds(us, protocol.UpdatePlan) {
		out = append(out, u.Entries)
	}
	return out
}

// A model that calls update_plan shows its plan to the client as plan updates (the full list
// each time), and load replays them where they happened.
func TestUpdatePlanSendsAndReplaysThePlan(t *testing.T) {
	first := []protocol.PlanEntry{
		{Content: "Read a.txt", Priority: "high", Status: "in_progress"},
		{Content: "Change alpha", Priority: "medium", Status: "pending"},
	}
	stale := []protocol.PlanEntry{{Content: "Stale", Priority: "low", Status: "pending"}}
	second := []protocol.PlanEntry{
		{Content: "Read a.txt", Priority: "high", Status: "completed"},
		{Content: "Change alpha", Priority: "medium", Status: "in_progress"},
	}
	h := newHarness(t,
		reply{events: callsReply(tc{"p1", "update_plan", planArgs(first...)})},
		// Read calls of one response run concurrently: the client must still end with the
		// plan of the model's last call, and a refused plan changes nothing.
		reply{events: callsReply(
			tc{"r1", "read_file", `{"path":"a.txt"}`},
			tc{"p2", "update_plan", planArgs(stale...)},
			tc{"p3", "update_plan", planArgs(second...)},
			tc{"p4", "update_plan", planArgs(protocol.PlanEntry{Content: "x", Priority: "high", Status: "done"})},
		)},
		reply{events: textReply("Planned.")},
	)
	h.tools = tools.NewRegistry(readTool{}, editTool{}, tools.UpdatePlan)
	h.m = h.manager()
	h.newSession()
	if res := h.prompt("change alpha"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	h.client.waitFor(t, "title", func(us []protocol.SessionUpdate) bool { return len(kinds(us, protocol.UpdateSessionInfoUpdate)) == 1 })

	us := h.client.snapshot()
	got := plans(us)
	if len(got) < 2 || !reflect.DeepEqual(got[0], first) || !reflect.DeepEqual(got[len(got)-1], second) {
		t.Fatalf("plans sent: %v", got)
	}
	for _, p := range got {
		if reflect.DeepEqual(p, []protocol.PlanEntry{{Content: "x", Priority: "high", Status: "done"}}) {
			t.Fatal("a refused plan reached the client")
		}
	}
	// The plan follows the call that set it, which the client sees as a completed think call.
	p1 := callUpdates(us, "p1")
	if p1[0].Kind != protocol.KindThink || finalStatus(us, "p1") != protocol.StatusCompleted {
		t.Fatalf("p1 updates: %s", dumpUpdates(p1))
	}
	var last protocol.SessionUpdate
	for _, u := range us {
		if u.SessionUpdate == protocol.UpdatePlan {
			if last.ToolCallID != "p1" || last.Status != protocol.StatusCompleted {
				t.Fatalf("the first plan came after %s, not after p1's final update", dumpUpdates([]protocol.SessionUpdate{last}))
			}
			break
		}
		last = u
	}
	if finalStatus(us, "p4") != protocol.StatusFailed {
		t.Fatalf("p4: %s", dumpUpdates(callUpdates(us, "p4")))
	}
	// The model reads the result, and the system prompt's tool list tells it about the tool.
	reqs := h.prov.requests()
	if trs := toolResults(reqs[1].Messages); len(trs) != 1 || !strings.Contains(trs[0].Text, "0 of 2 steps completed; in progress: Read a.txt") {
		t.Fatalf("result sent: %+v", trs)
	}
	if !strings.Contains(reqs[0].System, "- update_plan (read): Show the user your plan for a multi-step task") {
		t.Fatalf("system prompt: %s", reqs[0].System)
	}

	// A new daemon replays the plans, each after its call, ending with the last one.
	sid := h.sid
	if err := h.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.client = newFakeClient()
	h.m = h.manager()
	if _, err := h.m.Load(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	replay := h.client.snapshot()
	if rp := plans(replay); !reflect.DeepEqual(rp, got) {
		t.Fatalf("replayed plans %v, sent %v", rp, got)
	}
	var seq []string
	for _, u := range replay {
		if u.SessionUpdate == protocol.UpdateToolCall || u.SessionUpdate == protocol.UpdatePlan {
			seq = append(seq, fmt.Sprintf("%s:%s", u.SessionUpdate, u.ToolCallID))
		}
	}
	if s := strings.Join(seq, " "); !strings.HasPrefix(s, "tool_call:p1 plan: ") {
		t.Fatalf("replay order: %s", s)
	}
}
