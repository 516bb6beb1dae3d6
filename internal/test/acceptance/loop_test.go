package acceptance_test

// The agent loop's own messages to the model (prompt config messages.yml and tasks.yml): the
// unfinished-turn and required-tool nudges, the truncation notice and the answer review, each
// through the real binary with the scripted model.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

var readA = fakemodel.ToolCall{ID: "call_r", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}

// lastUser is the text of a request's last user message.
func lastUser(r chatRequest) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return string(r.Messages[i].Content)
		}
	}
	return ""
}

// agentText is everything the client was shown as the agent's message in a session.
func (e *env) agentText(sid string) string {
	var b strings.Builder
	for _, u := range kinds(e.rawUpdates(sid), "agent_message_chunk") {
		if c, ok := u["content"].(map[string]any); ok {
			b.WriteString(c["text"].(string))
		}
	}
	return b.String()
}

const unfinishedNudge = "You used tools in this turn but stopped without answering the user"

// A run that used tools and stops with nothing after the last tool results is told once to
// answer; a second silence ends the turn; a run without tools is never told.
func TestUnfinishedTurnNudge(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Routes: titleRoute, Turns: []fakemodel.Turn{
		{ToolCalls: []fakemodel.ToolCall{readA}},
		{Reasoning: "done, I think"}, // thinking alone is no answer
		{Text: "a.txt says hello."},
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_r2", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		{},
		{},
		{},
	}})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	e.writeFile("a.txt", "hello\n")
	sid := e.newSession()
	if res := e.prompt(sid, "what does a.txt say?"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	reqs := mainRequests(t, fm)
	if len(reqs) != 3 || !strings.Contains(lastUser(reqs[2]), unfinishedNudge) || strings.Contains(lastUser(reqs[1]), unfinishedNudge) {
		t.Fatalf("%d requests; the third's last user message: %s", len(reqs), lastUser(reqs[len(reqs)-1]))
	}
	if strings.Contains(e.agentText(sid), unfinishedNudge) {
		t.Fatal("the nudge was shown to the user")
	}
	// Silent again after the nudge: the turn ends, no second nudge.
	e.prompt(sid, "and again?")
	if reqs = mainRequests(t, fm); len(reqs) != 6 {
		t.Fatalf("%d requests, want 6 (one nudge only)", len(reqs))
	}
	// No tools ran: an empty answer is not nudged.
	e.prompt(sid, "say nothing")
	if reqs = mainRequests(t, fm); len(reqs) != 7 {
		t.Fatalf("%d requests, want 7", len(reqs))
	}
}

// A tool call written as text (nothing ran) is answered once with the required-tool nudge, and
// the model then calls the tool; prose that only names a tool is not, and neither is a call the
// model quotes (a README it echoes, in a fence or a blockquote): the nudge never tells it to make
// that call.
func TestRequiredToolNudge(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Routes: titleRoute, Turns: []fakemodel.Turn{
		{Text: "I will read it.\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}"},
		{ToolCalls: []fakemodel.ToolCall{readA}},
		{Text: "It says hello."},
		{Text: "Use read_file or search_text to look; {braces} are fine."},
		{Text: "The README says:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```\n> <tool_call>{\"name\": \"read_file\", \"arguments\": {}}</tool_call>\n"},
	}})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	e.writeFile("a.txt", "hello\n")
	sid := e.newSession()
	e.prompt(sid, "read a.txt")
	reqs := mainRequests(t, fm)
	if len(reqs) != 3 || !strings.Contains(lastUser(reqs[1]), "You wrote a call to read_file as text, so nothing ran") {
		t.Fatalf("%d requests; the second's last user message: %s", len(reqs), lastUser(reqs[min(1, len(reqs)-1)]))
	}
	if h := historyText(reqs[2]); !strings.Contains(h, "tool: 1\thello") {
		t.Fatalf("the tool did not run after the nudge:\n%s", h)
	}
	e.prompt(sid, "how do I look?")
	if reqs = mainRequests(t, fm); len(reqs) != 4 {
		t.Fatalf("%d requests: prose naming a tool was nudged", len(reqs))
	}
	e.prompt(sid, "what does the README say?")
	if reqs = mainRequests(t, fm); len(reqs) != 5 {
		t.Fatalf("%d requests: a quoted call was nudged", len(reqs))
	}
}

// A response cut at the output limit is told so once and goes on; a tool call it cut short
// does not run. A second cut in the turn ends it with max_tokens.
func TestTruncationNotice(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{Routes: titleRoute, Turns: []fakemodel.Turn{
		{Text: "Part one of a long answer", StopReason: "max_tokens"},
		{Text: ", and part two."},
		{ToolCalls: []fakemodel.ToolCall{{ID: "call_c", Name: "create_file", Arguments: json.RawMessage(`{"path":"b.txt","content":"x"}`)}}, StopReason: "max_tokens"},
		{Text: "again cut", StopReason: "max_tokens"},
	}})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{"maxTokens": 1000}))
	sid := e.newSession()
	if res := e.prompt(sid, "write a lot"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	reqs := mainRequests(t, fm)
	if len(reqs) != 2 || !strings.Contains(lastUser(reqs[1]), "Your last response was cut off at the output limit (1000 tokens). Continue from where you stopped") {
		t.Fatalf("%d requests; the last user message: %s", len(reqs), lastUser(reqs[len(reqs)-1]))
	}
	if res := e.prompt(sid, "make b.txt"); res.StopReason != protocol.StopMaxTokens {
		t.Fatalf("stopReason %q after a second cut", res.StopReason)
	}
	reqs = mainRequests(t, fm)
	if len(reqs) != 4 || !strings.Contains(lastUser(reqs[3]), "Its tool calls were incomplete, so none of them ran") {
		t.Fatalf("%d requests; the last user message: %s", len(reqs), lastUser(reqs[len(reqs)-1]))
	}
	for _, m := range reqs[3].Messages {
		if m.Role == "tool" && !strings.Contains(string(m.Content), "not run: the response reached the max_tokens limit") {
			t.Fatalf("the cut call's result: %s", m.Content)
		}
	}
}

// answerReviewScript reads a.txt, answers with code, and has review answer the review request.
func answerReviewScript(review string) fakemodel.Script {
	return fakemodel.Script{
		Routes: append([]fakemodel.Route{{Match: "You check a coding agent", Turn: fakemodel.Turn{Text: review}}}, titleRoute...),
		Turns: []fakemodel.Turn{
			{ToolCalls: []fakemodel.ToolCall{readA}},
			{Text: "Split it:\n```go\nparts := strings.Split(s)\n```"},
			{Text: "next"},
		},
	}
}

// reviewRequests are the texts of the review requests the model was sent: system and message.
func reviewRequests(t *testing.T, fm *fakemodel.Server) []string {
	var out []string
	for _, b := range fm.Requests() {
		if strings.Contains(string(b), "You check a coding agent") {
			out = append(out, historyText(parseChat(t, b)))
		}
	}
	return out
}

// historyText is every message's text of a request, decoded, one after the other.
func historyText(r chatRequest) string {
	var b strings.Builder
	for _, m := range r.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			s = string(m.Content)
		}
		b.WriteString(m.Role + ": " + s + "\n")
	}
	return b.String()
}

// With answerReview on, an answer holding code is checked against the tools' evidence; a
// correction is shown under the heading and replaces the answer in the history.
func TestAnswerReviewCorrects(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, answerReviewScript("Split it on commas:\n```go\nparts := strings.Split(s, \",\")\n```\nEND_OF_REVIEW"))
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{"answerReview": true}))
	e.writeFile("a.txt", "func Split(s, sep string) []string\n")
	sid := e.newSession()
	e.prompt(sid, "how do I split s?")
	rr := reviewRequests(t, fm)
	if len(rr) != 1 {
		t.Fatalf("%d review requests", len(rr))
	}
	for _, want := range []string{"<evidence tool=\"read_file\">\n1\tfunc Split(s, sep string) []string", "<answer>\nSplit it:\n```go\nparts := strings.Split(s)\n```\n</answer>", "<request>\nhow do I split s?", "End your reply with END_OF_REVIEW on a line of its own."} {
		if !strings.Contains(rr[0], want) {
			t.Errorf("the review request lacks %q:\n%s", want, rr[0])
		}
	}
	shown := e.agentText(sid)
	if !strings.Contains(shown, "parts := strings.Split(s)\n") || !strings.Contains(shown, "Reviewed answer (checked against what the tools found):\n\nSplit it on commas:") || strings.Contains(shown, "END_OF_REVIEW") {
		t.Fatalf("shown:\n%s", shown)
	}
	e.prompt(sid, "thanks")
	reqs := mainRequests(t, fm)
	hist := historyText(reqs[len(reqs)-1])
	if !strings.Contains(hist, "assistant: Split it on commas:\n```go\nparts := strings.Split(s, \",\")") || strings.Contains(hist, "strings.Split(s)\n") || strings.Contains(hist, "Reviewed answer") {
		t.Fatalf("the history does not hold the reviewed answer alone:\n%s", hist)
	}
}

// A review cut off before its end marker says nothing: the answer stays as it was. So does an
// approval, and with the setting off (the default) no review is asked for.
func TestAnswerReviewCutOffKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		review   string
		settings map[string]any
		requests int
	}{
		"cut":      {"Split it on commas:\n```go\nparts := strings.Split(s, \",\"", map[string]any{"answerReview": true}, 1},
		"approved": {"APPROVED\nEND_OF_REVIEW", map[string]any{"answerReview": true}, 1},
		"off":      {"Wrong\nEND_OF_REVIEW", nil, 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fm, url := fakeModel(t, answerReviewScript(c.review))
			e := start(t, fakeeditor.Full(), openaiSettings(url, c.settings))
			e.writeFile("a.txt", "func Split(s, sep string) []string\n")
			sid := e.newSession()
			e.prompt(sid, "how do I split s?")
			if n := len(reviewRequests(t, fm)); n != c.requests {
				t.Fatalf("%d review requests", n)
			}
			if shown := e.agentText(sid); strings.Contains(shown, "Reviewed answer") || strings.Contains(shown, "commas") {
				t.Fatalf("shown:\n%s", shown)
			}
			e.prompt(sid, "thanks")
			reqs := mainRequests(t, fm)
			hist := historyText(reqs[len(reqs)-1])
			if !strings.Contains(hist, "assistant: Split it:\n```go\nparts := strings.Split(s)\n```") {
				t.Fatalf("the history lost the answer: %s", hist)
			}
		})
	}
}
