package acceptance_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// PROTOCOL.md v1.2 "Skills, subagents, hooks" → Subagents, through the binary.

// agentCall is a scripted agent tool call.
func agentCall(id, agent, description, prompt string) fakemodel.ToolCall {
	args, _ := json.Marshal(map[string]string{"agent": agent, "description": description, "prompt": prompt})
	return fakemodel.ToolCall{ID: id, Name: "agent", Arguments: args}
}

// timedModel is a fake model that notes when each request arrived.
type timedModel struct {
	*fakemodel.Server
	mu sync.Mutex
	at []time.Time
}

func startTimedModel(t *testing.T, script fakemodel.Script) (*timedModel, string) {
	t.Helper()
	m := &timedModel{Server: fakemodel.New(script)}
	m.OnRequest(func([]byte) {
		m.mu.Lock()
		m.at = append(m.at, time.Now())
		m.mu.Unlock()
	})
	url, err := m.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, url
}

// requestsWith are the chat requests whose body holds marker, with their arrival times.
func (m *timedModel) requestsWith(t *testing.T, marker string) ([]chatRequest, []time.Time) {
	t.Helper()
	bodies := m.Requests()
	m.mu.Lock()
	at := slices.Clone(m.at)
	m.mu.Unlock()
	var out []chatRequest
	var when []time.Time
	for i, b := range bodies {
		if bytes.Contains(b, []byte(marker)) {
			out = append(out, parseChat(t, b))
			if i < len(at) {
				when = append(when, at[i])
			}
		}
	}
	return out, when
}

func toolNames(r chatRequest) []string {
	var out []string
	for _, tl := range r.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

// A subagent's first request carries none of the parent's messages (its definition's system text
// and the task only), declares the definition's tools only, and its final answer comes back as
// the agent call's result; its tool call reaches the client nested under the agent call, its text
// does not stream as the parent's; the prompt's usage and the session's cost include the child's.
func TestSubagentFreshContextOwnToolsAndAnswer(t *testing.T) {
	t.Parallel()
	fm, url := startTimedModel(t, fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_1", "alpha", "read f", "ALPHA-TASK: read f.txt and say what it holds")}, Usage: json.RawMessage(`{"input":100,"output":10}`)},
			{Text: "parent done", Usage: json.RawMessage(`{"input":200,"output":20}`)},
		},
		Routes: append([]fakemodel.Route{
			{Match: `"ca_1"`, Turn: fakemodel.Turn{Text: "ALPHA-ANSWER: f.txt says hello", Usage: json.RawMessage(`{"input":2000,"output":60}`)}},
			{Match: "ALPHA-SYSTEM", Turn: fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "ca_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"f.txt"}`)}}, Usage: json.RawMessage(`{"input":1000,"output":50}`)}},
		}, titleRoute...),
	})
	settings, _ := json.Marshal(map[string]any{
		"provider":  "fm",
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": url, "model": "gpt-5-mini"}},
	})
	e := start(t, fakeeditor.Full(), settings)
	e.writeFile("f.txt", "hello\n")
	e.writeFile(".agentd/agents/alpha.md", "---\nname: alpha\ndescription: Reads files.\ntools: [read_file, search_text]\n---\nALPHA-SYSTEM: read what you are told and report it.\n")
	sid := e.newSession()
	res := e.prompt(sid, "PARENT-SECRET: find out what f.txt says, use alpha")
	if res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}

	child, _ := fm.requestsWith(t, "ALPHA-SYSTEM")
	if len(child) != 2 {
		t.Fatalf("%d child requests, want 2", len(child))
	}
	parent, _ := fm.requestsWith(t, "PARENT-SECRET")
	if len(parent) == 0 || !strings.Contains(contentText(t, parent[0].Messages[0].Content), "- alpha: Reads files.") {
		t.Errorf("the parent's system prompt does not list the project's agent")
	}
	first := child[0]
	if len(first.Messages) != 2 || first.Messages[0].Role != "system" || first.Messages[1].Role != "user" {
		t.Fatalf("the child's first request has messages %+v, want the system text and the task", first.Messages)
	}
	if got := contentText(t, first.Messages[1].Content); got != "ALPHA-TASK: read f.txt and say what it holds" {
		t.Errorf("the child's task = %q", got)
	}
	for _, r := range child {
		for _, m := range r.Messages {
			if strings.Contains(string(m.Content), "PARENT-SECRET") {
				t.Fatalf("a child request carries the parent's message: %s", m.Content)
			}
		}
	}
	if got := toolNames(first); !slices.Equal(got, []string{"read_file", "search_text"}) {
		t.Errorf("the child's tools = %v, want its definition's [read_file search_text]", got)
	}
	if got := toolResultText(t, fm.Server, "pa_1"); got != "ALPHA-ANSWER: f.txt says hello" {
		t.Errorf("the agent call's result = %q", got)
	}
	if got := toolResultText(t, fm.Server, "ca_1"); !strings.Contains(got, "hello") {
		t.Errorf("the child's read result = %q", got)
	}

	us := e.rawUpdates(sid)
	var nested map[string]any
	for _, u := range kinds(us, "tool_call") {
		if u["toolCallId"] == "pa_1/ca_1" {
			nested = u
		}
	}
	if nested == nil || obj(nested, "_meta", "agentd/parentToolCallId") != "pa_1" || nested["kind"] != "read" {
		t.Fatalf("the child's call on the wire: %v", nested)
	}
	if f := finalUpdate(e, sid, "pa_1/ca_1"); f == nil || f["status"] != "completed" || obj(f, "_meta", "agentd/parentToolCallId") != "pa_1" {
		t.Errorf("the child's call's final update: %v", f)
	}
	if f := finalUpdate(e, sid, "pa_1"); f == nil || f["status"] != "completed" || !strings.Contains(string(mustMarshal(f["content"])), "ALPHA-ANSWER") {
		t.Errorf("the agent call's final update: %v", f)
	}
	for _, u := range kinds(us, "agent_message_chunk") {
		if s, _ := obj(u, "content", "text").(string); strings.Contains(s, "ALPHA") {
			t.Errorf("the child's text streamed as the parent's: %v", u)
		}
	}

	if res.Usage == nil || res.Usage.InputTokens != 3300 || res.Usage.OutputTokens != 140 || res.Usage.TotalTokens != 3440 {
		t.Errorf("the prompt's usage = %+v, want the parent's 300+30 and the child's 3000+110", res.Usage)
	}
	uu := kinds(us, "usage_update")
	if len(uu) == 0 {
		t.Fatal("no usage_update")
	}
	// The turn's last update holds the parent's and the child's calls; the title's request, made
	// after the turn answered, may add one more update after it.
	want := (3300*0.25 + 140*2) / 1e6
	var amounts []float64
	for _, u := range uu {
		cost, _ := u["cost"].(map[string]any)
		amount, _ := cost["amount"].(float64)
		amounts = append(amounts, amount)
	}
	if !slices.ContainsFunc(amounts, func(a float64) bool { return math.Abs(a-want) < 1e-12 }) {
		t.Errorf("the session's costs = %v, want %v (the parent's and the child's calls) among them", amounts, want)
	}
}

// Two agent calls of one response run at once: the second child's request arrives while the
// first child's answer is still streaming, and the turn with two children takes about as long as
// the turn with one (the figure docs/benchmarks.md records), not twice as long.
func TestTwoSubagentsRunAtOnce(t *testing.T) {
	t.Parallel()
	const childMs = 700
	// One text chunk, then the finish and usage chunks childMs apart: a child's answer streams
	// for about 2×childMs.
	slow := func(text string) fakemodel.Turn {
		return fakemodel.Turn{Text: text, ChunkSize: len(text), ChunkDelayMs: childMs}
	}
	fm, url := startTimedModel(t, fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_0", "alpha", "one", "look at one")}},
			{Text: "one done"},
			{ToolCalls: []fakemodel.ToolCall{
				agentCall("pa_1", "alpha", "one", "look at one"),
				agentCall("pa_2", "beta", "two", "look at two"),
			}},
			{Text: "both done"},
		},
		Routes: append([]fakemodel.Route{
			{Match: "ALPHA-SYSTEM", Turn: slow("alpha found one")},
			{Match: "BETA-SYSTEM", Turn: slow("beta found two")},
		}, titleRoute...),
	})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	e.writeFile(".agentd/agents/alpha.md", "---\nname: alpha\ndescription: a\ntools: [read_file]\n---\nALPHA-SYSTEM\n")
	e.writeFile(".agentd/agents/beta.md", "---\nname: beta\ndescription: b\ntools: [read_file]\n---\nBETA-SYSTEM\n")
	sid := e.newSession()
	timed := func(text string) time.Duration {
		start := time.Now()
		if res := e.prompt(sid, text); res.StopReason != "end_turn" {
			t.Fatalf("stop %q", res.StopReason)
		}
		return time.Since(start)
	}
	one := timed("do one")
	two := timed("do both")
	_, a := fm.requestsWith(t, "ALPHA-SYSTEM")
	_, b := fm.requestsWith(t, "BETA-SYSTEM")
	if len(a) != 2 || len(b) != 1 {
		t.Fatalf("child requests: alpha %d, beta %d", len(a), len(b))
	}
	gap := a[1].Sub(b[0]).Abs()
	t.Logf("turn with one subagent: %v; with two at once: %v; the two children's requests %v apart",
		one.Round(time.Millisecond), two.Round(time.Millisecond), gap.Round(time.Millisecond))
	if gap >= childMs*time.Millisecond {
		t.Errorf("the second child started %v after the first: they ran one after the other", gap)
	}
	for id, want := range map[string]string{"pa_1": "alpha found one", "pa_2": "beta found two"} {
		if got := toolResultText(t, fm.Server, id); got != want {
			t.Errorf("%s result = %q, want %q", id, got, want)
		}
	}
}

// A child's edit asks through the parent session's client, on the parent's session id, with the
// card nested under the agent call; the answer applies (allowed once, the edit is made).
func TestSubagentEditAsksThroughTheParentsClient(t *testing.T) {
	t.Parallel()
	fm, e, path := startWriterChild(t, "edited", "read_file, edit_file")
	sid := e.newSession()
	e.ed.AnswerPermissions(protocol.OptionAllowOnce)
	res := e.prompt(sid, "fix it")
	if res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	// The child's edit is the turn's change, as the prompt's answer lists them.
	if ch := string(mustMarshal(res.Meta[protocol.MetaChanges])); !strings.Contains(ch, path) || !strings.Contains(ch, `"modified"`) {
		t.Errorf("the turn's changes = %s, want the child's edit of f.txt", ch)
	}
	perms := e.ed.PermissionRequests()
	if len(perms) != 1 {
		t.Fatalf("%d permission requests, want the child's edit's one", len(perms))
	}
	p := perms[0]
	if p.SessionID != sid || p.ToolCall.ToolCallID != "pa_1/cw_1" || p.ToolCall.Meta[protocol.MetaParentToolCall] != "pa_1" {
		t.Errorf("the child's question: session %q, toolCall %q, _meta %v", p.SessionID, p.ToolCall.ToolCallID, p.ToolCall.Meta)
	}
	if len(p.ToolCall.ToolContent) == 0 || p.ToolCall.ToolContent[0].Type != "diff" {
		t.Errorf("the child's card shows no diff: %+v", p.ToolCall.ToolContent)
	}
	if got := e.ed.Text(path); got != "b\n" {
		t.Errorf("f.txt = %q after the allowed child edit", got)
	}
	if got := toolResultText(t, fm, "pa_1"); got != "edited" {
		t.Errorf("the agent call's result = %q", got)
	}
}

// Cancelling the parent's prompt while a child streams ends the child too: the prompt answers
// cancelled, the agent call ends failed, and no request follows.
func TestCancelDuringASubagent(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_1", "", "look", "look around")}},
			{Text: "parent done"},
		},
		Routes: append([]fakemodel.Route{
			{Match: "You are explore", Turn: fakemodel.Turn{Text: strings.Repeat("word ", 400), ChunkDelayMs: 30}},
		}, titleRoute...),
	})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	done := make(chan protocol.PromptResult, 1)
	go func() {
		res, err := e.ed.Prompt(ctxT(t), sid, "explore")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	e.ed.WaitUpdate("the child streaming", func(u protocol.SessionNotification) bool {
		return u.Update.SessionUpdate == protocol.UpdateToolCallUpdate && u.Update.ToolCallID == "pa_1" && u.Update.Status == protocol.StatusInProgress
	})
	if _, err := fm.WaitRequests(ctxT(t), 2); err != nil {
		t.Fatal(err)
	}
	n := len(fm.Requests())
	if err := e.ed.Notify(ctxT(t), protocol.MethodSessionCancel, protocol.SessionIDParams{SessionID: sid}); err != nil {
		t.Fatal(err)
	}
	var res protocol.PromptResult
	select {
	case res = <-done:
	case <-time.After(15 * time.Second): // a hang guard: the child's stream runs for 12 s
		t.Fatal("the prompt did not answer the cancel during a subagent")
	}
	if res.StopReason != "cancelled" {
		t.Fatalf("stop %q, want cancelled", res.StopReason)
	}
	if f := finalUpdate(e, sid, "pa_1"); f == nil || f["status"] != "failed" {
		t.Errorf("the agent call after the cancel: %v", f)
	}
	if got := len(fm.Requests()); got != n {
		t.Errorf("%d requests after the cancel", got-n)
	}
}

// A child has no agent tool: the built-in explore declares read tools only, none named agent, and
// a call to agent that its model makes anyway is an unknown tool; no grandchild starts.
func TestSubagentCannotStartASubagent(t *testing.T) {
	t.Parallel()
	fm, url := startTimedModel(t, fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_1", "", "look", "look around")}},
			{Text: "parent done"},
		},
		Routes: append([]fakemodel.Route{
			{Match: `"cx_1"`, Turn: fakemodel.Turn{Text: "could not delegate"}},
			{Match: "You are explore", Turn: fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{agentCall("cx_1", "", "deeper", "GRANDCHILD-TASK")}}},
		}, titleRoute...),
	})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	if res := e.prompt(sid, "explore"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	child, _ := fm.requestsWith(t, "You are explore")
	if len(child) != 2 {
		t.Fatalf("%d requests with explore's system text, want the child's two", len(child))
	}
	tools := toolNames(child[0])
	if slices.Contains(tools, "agent") || slices.Contains(tools, "edit_file") || slices.Contains(tools, "run_program") || !slices.Contains(tools, "read_file") {
		t.Errorf("explore's tools = %v", tools)
	}
	if got := toolResultText(t, fm.Server, "cx_1"); !strings.Contains(got, "agent") || !strings.Contains(strings.ToLower(got), "unknown") && !strings.Contains(got, "no tool") {
		t.Errorf("the child's agent call got %q", got)
	}
	for _, r := range child {
		if len(r.Messages) > 0 && strings.Contains(string(r.Messages[len(r.Messages)-1].Content), "GRANDCHILD-TASK") && r.Messages[len(r.Messages)-1].Role == "user" {
			t.Errorf("a grandchild started")
		}
	}
	if got := toolResultText(t, fm.Server, "pa_1"); got != "could not delegate" {
		t.Errorf("the agent call's result = %q", got)
	}
}

// A project's definition is data: its model may not send the user's code to another of the
// user's providers (ignored with a notice, the child runs on the session's), and its tools do not
// loosen the permissions: its program asks, in ask mode, on the parent's client.
func TestProjectAgentDefinitionCannotLoosen(t *testing.T) {
	t.Parallel()
	other, otherURL := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{{Text: "OTHER-PROVIDER"}}, RepeatLast: true})
	root := realDir(t)
	marker := filepath.Join(root, "ran")
	fm, url := fakeModel(t, fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_1", "sneaky", "run", "run the build")}},
			{Text: "parent done"},
		},
		Routes: append([]fakemodel.Route{
			{Match: `"cs_1"`, Turn: fakemodel.Turn{Text: "it was refused"}},
			{Match: "SNEAKY-SYSTEM", Turn: fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "cs_1", Name: "run_program", Arguments: json.RawMessage(`{"command":["touch","` + marker + `"]}`)}}}},
		}, titleRoute...),
	})
	settings, _ := json.Marshal(map[string]any{
		"provider": "fm",
		"providers": map[string]any{
			"fm":    map[string]any{"apiType": "openai", "baseUrl": url, "model": fakemodel.ModelID},
			"other": map[string]any{"apiType": "openai", "baseUrl": otherURL, "model": "other-model"},
		},
		"sandbox": map[string]any{"mode": "off"},
	})
	if err := os.MkdirAll(filepath.Join(root, ".agentd", "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(root, ".agentd", "agents", "sneaky.md")
	if err := os.WriteFile(def, []byte("---\nname: sneaky\ndescription: Builds.\ntools: [run_program]\nmodel: other\n---\nSNEAKY-SYSTEM\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startIn(t, fakeeditor.Full(), settings, "", root)
	sid := e.newSession()
	e.ed.AnswerPermissions(protocol.OptionRejectOnce)
	if res := e.prompt(sid, "build"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	if n := len(other.Requests()); n != 0 {
		t.Errorf("the project's definition sent %d requests to another provider", n)
	}
	n := e.ed.WaitUpdate("model notice", func(u protocol.SessionNotification) bool {
		return u.Update.SessionUpdate == protocol.UpdateNotice && u.Update.NoticeTitle == "A project agent's model was ignored"
	})
	if !strings.Contains(n.Update.Description, def) || !strings.Contains(n.Update.Description, "trustedProjects") {
		t.Errorf("notice: %s", n.Update.Description)
	}
	perms := e.ed.PermissionRequests()
	if len(perms) != 1 || perms[0].ToolCall.ToolCallID != "pa_1/cs_1" {
		t.Fatalf("permission requests %+v, want the child's program's", perms)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the child's program ran though the user refused it")
	}
	if got := toolResultText(t, fm, "pa_1"); got != "it was refused" {
		t.Errorf("the agent call's result = %q", got)
	}
}

// The children's transcripts are saved with the parent's: load replays the agent call, then the
// child's calls nested under it with their final status, and the child's messages stay out of the
// parent's history (the next prompt's request holds the agent's answer, not the child's steps).
func TestLoadReplaysASubagentsCalls(t *testing.T) {
	t.Parallel()
	root := realDir(t)
	script := fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_1", "", "read f", "read f.txt")}},
			{Text: "parent done"},
			{Text: "second answer"},
		},
		Routes: append([]fakemodel.Route{
			{Match: `"ce_1"`, Turn: fakemodel.Turn{Text: "EXPLORE-ANSWER"}},
			{Match: "You are explore", Turn: fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "ce_1", Name: "read_file", Arguments: json.RawMessage(`{"path":"f.txt"}`)}}}},
		}, titleRoute...),
	}
	fm, url := fakeModel(t, script)
	if err := os.WriteFile(filepath.Join(root, "f.txt"), []byte("CHILD-READ-TEXT\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := startIn(t, fakeeditor.Full(), openaiSettings(url, nil), "", root)
	sid := e.newSession()
	if res := e.prompt(sid, "go"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	e.p.stdin.Close()
	e.p.waitExit(exitGuard)

	e2 := startIn(t, fakeeditor.Full(), openaiSettings(url, nil), e.p.state, root)
	var lr protocol.SessionLoadResult
	if err := e2.ed.Call(ctxT(t), protocol.MethodSessionLoad, protocol.SessionLoadParams{SessionID: sid, Cwd: root}, &lr); err != nil {
		t.Fatalf("load: %v", err)
	}
	var order []string
	var child map[string]any
	for _, u := range e2.rawUpdates(sid) {
		if u["sessionUpdate"] != "tool_call" && u["sessionUpdate"] != "tool_call_update" {
			continue
		}
		id, _ := u["toolCallId"].(string)
		order = append(order, u["sessionUpdate"].(string)+":"+id)
		if id == "pa_1/ce_1" {
			child = u
		}
	}
	if got := strings.Join(order, " "); got != "tool_call:pa_1 tool_call:pa_1/ce_1 tool_call_update:pa_1" {
		t.Errorf("replayed calls: %s", got)
	}
	if child == nil || child["status"] != "completed" || obj(child, "_meta", "agentd/parentToolCallId") != "pa_1" {
		t.Errorf("the replayed child call: %v", child)
	}
	if f := finalUpdate(e2, sid, "pa_1"); f == nil || f["status"] != "completed" {
		t.Errorf("the replayed agent call: %v", f)
	}
	if res := e2.prompt(sid, "again"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	reqs := fm.Requests()
	last := reqs[len(reqs)-1]
	if !bytes.Contains(last, []byte("EXPLORE-ANSWER")) || bytes.Contains(last, []byte("CHILD-READ-TEXT")) || bytes.Contains(last, []byte("ce_1")) {
		t.Errorf("the loaded parent's history holds the child's steps or lacks its answer:\n%s", last)
	}
}

// A child never runs in a looser mode than its parent: in plan mode its edit is refused without a
// question (not even the offer to leave plan mode, which is the parent's to make), and the file
// stays as it was.
func TestSubagentInPlanModeCannotEdit(t *testing.T) {
	t.Parallel()
	fm, e, path := startWriterChild(t, "could not edit", "edit_file")
	sid := e.newSession()
	e.setMode(sid, "plan")
	if res := e.prompt(sid, "fix it"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	if n := len(e.ed.PermissionRequests()); n != 0 {
		t.Errorf("%d permission requests from a child in plan mode", n)
	}
	if got := e.ed.Text(path); got != "a\n" {
		t.Errorf("f.txt = %q after a child's edit in plan mode", got)
	}
	if got := toolResultText(t, fm, "cw_1"); !strings.Contains(strings.ToLower(got), "plan") {
		t.Errorf("the child's edit result = %q, want the plan-mode refusal", got)
	}
}

// A child stops at its token budget (subagents.maxTokens): no request past it, and the agent
// call's result says so.
func TestSubagentStopsAtItsTokenBudget(t *testing.T) {
	t.Parallel()
	step := func(id string) fakemodel.Turn {
		return fakemodel.Turn{Text: "still looking", ToolCalls: []fakemodel.ToolCall{{ID: id, Name: "list_dir", Arguments: json.RawMessage(`{"path":"."}`)}}, Usage: json.RawMessage(`{"input":2500,"output":500}`)}
	}
	fm, url := startTimedModel(t, fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_1", "", "look", "look around")}},
			{Text: "parent done"},
		},
		Routes: append([]fakemodel.Route{
			// Every step of the child lists again and reports 3000 tokens.
			{Match: `"cb_2"`, Turn: step("cb_3")},
			{Match: `"cb_1"`, Turn: step("cb_2")},
			{Match: "You are explore", Turn: step("cb_1")},
		}, titleRoute...),
	})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{"subagents": map[string]any{"maxTokens": 5000}}))
	sid := e.newSession()
	if res := e.prompt(sid, "explore"); res.StopReason != "end_turn" {
		t.Fatalf("stop %q", res.StopReason)
	}
	child, _ := fm.requestsWith(t, "You are explore")
	if len(child) != 2 {
		t.Errorf("%d child requests, want 2 (3000 tokens each, a budget of 5000)", len(child))
	}
	if got := toolResultText(t, fm.Server, "pa_1"); !strings.Contains(got, "still looking") || !strings.Contains(got, "budget of 5000 tokens") {
		t.Errorf("the agent call's result = %q", got)
	}
}

// startWriterChild starts agentd with the project agent "writer" (its tools given, as in its
// front matter), whose child edits f.txt ("a" to "b") and then answers answer; the parent's
// model calls it once (pa_1) and then says "parent done".
func startWriterChild(t *testing.T, answer, tools string) (*fakemodel.Server, *env, string) {
	t.Helper()
	fm, url := fakeModel(t, fakemodel.Script{
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{agentCall("pa_1", "writer", "fix f", "change a to b in f.txt")}},
			{Text: "parent done"},
		},
		Routes: append([]fakemodel.Route{
			{Match: `"cw_1"`, Turn: fakemodel.Turn{Text: answer}},
			{Match: "WRITER-SYSTEM", Turn: fakemodel.Turn{ToolCalls: []fakemodel.ToolCall{{ID: "cw_1", Name: "edit_file", Arguments: json.RawMessage(`{"path":"f.txt","edits":[{"old_text":"a","new_text":"b"}]}`)}}}},
		}, titleRoute...),
	})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	path := e.writeFile("f.txt", "a\n")
	e.writeFile(".agentd/agents/writer.md", "---\nname: writer\ndescription: Edits.\ntools: ["+tools+"]\n---\nWRITER-SYSTEM\n")
	return fm, e, path
}
