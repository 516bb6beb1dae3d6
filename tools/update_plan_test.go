package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// update_plan is an agentd extension (docs/protocol.md, "The update_plan tool"), registered in
// Default like the contract's tools, so the registry checks cover it too.
func init() { contract["update_plan"] = EffectRead }

func TestUpdatePlan(t *testing.T) {
	h := newHarness(t, nil)
	args := map[string]any{"entries": []map[string]any{
		{"content": "  Read the parser ", "priority": "high", "status": "completed"},
		{"content": "Fix the off-by-one", "priority": "high", "status": "in_progress"},
		{"content": "Add a test", "priority": "medium", "status": "pending"},
	}}
	r := mustOK(t, h.run("update_plan", args))
	mustContain(t, r.Output, "1 of 3 steps completed", "in progress: Fix the off-by-one")
	want := Plan{Entries: []PlanEntry{
		{Content: "Read the parser", Priority: "high", Status: "completed"},
		{Content: "Fix the off-by-one", Priority: "high", Status: "in_progress"},
		{Content: "Add a test", Priority: "medium", Status: "pending"},
	}}
	if got, ok := r.Raw.(Plan); !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("raw = %#v", r.Raw)
	}
	// The client sees the plan as rawOutput in the plan update's own shape.
	b, _ := json.Marshal(r.Raw)
	if !strings.HasPrefix(string(b), `{"entries":[{"content":"Read the parser","priority":"high","status":"completed"}`) {
		t.Fatalf("raw JSON = %s", b)
	}
	if len(h.ws.bufs) != 0 {
		t.Fatal("update_plan touched the workspace")
	}

	r = mustOK(t, h.run("update_plan", map[string]any{"entries": []map[string]any{
		{"content": "Read", "priority": "low", "status": "completed"},
		{"content": "Fix", "priority": "low", "status": "completed"},
	}}))
	mustContain(t, r.Output, "2 of 2 steps completed.")
	r = mustOK(t, h.run("update_plan", map[string]any{"entries": []map[string]any{{"content": "Read", "priority": "low", "status": "pending"}}}))
	mustContain(t, r.Output, "none in progress")
}

func TestUpdatePlanValidation(t *testing.T) {
	h := newHarness(t, nil)
	entry := func(content, priority, status string) map[string]any {
		return map[string]any{"content": content, "priority": priority, "status": status}
	}
	for _, c := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "missing required field entries"},
		{map[string]any{"entries": []any{}}, "field entries needs at least 1 items"},
		{map[string]any{"entries": "read, fix"}, "field entries must be an array"},
		{map[string]any{"entries": []any{entry("a", "urgent", "pending")}}, `field entries[0].priority must be one of "high", "medium", "low", not "urgent"`},
		{map[string]any{"entries": []any{entry("a", "high", "pending"), entry("b", "high", "done")}}, `field entries[1].status must be one of "pending", "in_progress", "completed"`},
		{map[string]any{"entries": []any{map[string]any{"content": "a", "status": "pending"}}}, "missing required field entries[0].priority"},
		{map[string]any{"entries": []any{map[string]any{"content": "a", "priority": "high", "status": "pending", "id": "1"}}}, "unknown field entries[0].id"},
		{map[string]any{"entries": []any{entry(" \n", "high", "pending")}}, "field entries[0].content is empty"},
		{map[string]any{"entries": []any{entry(strings.Repeat("x", 501), "high", "pending")}}, "field entries[0].content is 501 bytes long"},
		{map[string]any{"entries": []any{entry("a", "high", "in_progress"), entry("b", "low", "pending"), entry("c", "low", "in_progress")}}, "field entries[2].status: only one entry may be in_progress, and entries[0] already is"},
		{map[string]any{"entries": []any{entry("a", "high", "pending")}, "explanation": "x"}, "unknown field explanation"},
	} {
		r := h.run("update_plan", c.args)
		mustErr(t, r, c.want)
		if r.Raw != nil {
			t.Fatalf("a refused plan carries raw output %#v", r.Raw)
		}
	}
	many := make([]any, maxPlanEntries+1)
	for i := range many {
		many[i] = entry("step", "low", "pending")
	}
	mustErr(t, h.run("update_plan", map[string]any{"entries": many}), "field entries has 51 items; at most 50")
}

func TestUpdatePlanSpec(t *testing.T) {
	tool, ok := Default().Lookup("update_plan")
	if !ok {
		t.Fatal("update_plan is not in Default()")
	}
	if tool.Effect() != EffectRead || tool.Kind() != "think" {
		t.Fatalf("effect %v, kind %q", tool.Effect(), tool.Kind())
	}
	for args, want := range map[string]string{
		`{"entries":[{"content":"Fix the parser","priority":"high","status":"in_progress"}]}`: "Plan: Fix the parser",
		`{"entries":[{"content":"Fix","priority":"high","status":"pending"}]}`:                "Update plan",
		`{"entries":[{"content":"` + strings.Repeat("é", 40) + `","status":"in_progress"}]}`:  "Plan: " + strings.Repeat("é", 30) + "…",
	} {
		if got := tool.Title(json.RawMessage(args)); got != want {
			t.Errorf("title of %s = %q, want %q", args, got, want)
		}
	}
}
