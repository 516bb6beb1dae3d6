package session

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/providers"
)

// nudges records which of the loop's one-shot messages a turn has sent: each goes at most once
// per turn, so a model that keeps doing the same thing ends the turn instead of looping.
type nudges struct {
	// start is the history index of the turn's first message (its prompt).
	start int
	// ranTools is set once a call of the turn has run (or been refused: the model tried).
	ranTools   bool
	unfinished bool
	required   bool
	truncated  bool
	reviewed   bool
}

// stepText is the visible text of a model response: its text parts, not its thinking.
func stepText(st *step) string {
	var b strings.Builder
	for _, p := range st.parts {
		if p.Type == providers.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// nudge puts one of the loop's messages into the history as a user message the model reads in
// its next request. The user is not shown it (it is agentd talking to the model); the trace
// records it.
func (t *turn) nudge(kind, text string) {
	t.s.appendHistory(providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: text}}})
	t.s.m.trace.event(t.s.id, "nudge", map[string]any{"kind": kind})
}

// nudgeUnfinished sends loop.unfinished_turn, once per turn, when a run that used tools stops
// without answering: the model's last response, the one after the last tool results, has no
// text (thinking alone is no answer). It reports whether it sent it, in which case the loop asks
// the model again.
func (t *turn) nudgeUnfinished(st *step) bool {
	if !t.nudges.ranTools || t.nudges.unfinished || len(st.calls) > 0 || strings.TrimSpace(stepText(st)) != "" {
		return false
	}
	t.nudges.unfinished = true
	t.nudge("unfinished_turn", t.texts().Render("loop.unfinished_turn", nil))
	return true
}

// nudgeRequiredTool sends loop.required_tool, once per turn, when the model answered without
// calling a tool but its answer holds a tool call written out as text (a JSON object naming one
// of the turn's tools with its arguments, or a <tool_call> envelope) outside any quote: the task
// needed the tool, the model meant to call it, and nothing ran. A call the model quotes (in a
// code fence, a blockquote or inline code: a README it echoes) is not one, and the nudge never
// tells the model to make it. Models served without native tool support, or
// prompted with another agent's syntax, do this; telling them once is what gets the call made.
func (t *turn) nudgeRequiredTool(st *step) bool {
	if t.nudges.required || len(st.calls) > 0 {
		return false
	}
	name, ok := writtenToolCall(unquoted(stepText(st)), func(n string) bool { _, ok := t.reg.Lookup(n); return ok })
	if !ok {
		return false
	}
	t.nudges.required = true
	t.nudge("required_tool", t.texts().Render("loop.required_tool", prompts.Run{"TOOL": name}))
	return true
}

// unquoted is text without what it quotes: code fences (``` or ~~~), blockquote lines and
// inline code spans each become an empty line or nothing.
func unquoted(text string) string {
	var b strings.Builder
	fence := ""
	for _, line := range strings.SplitAfter(text, "\n") {
		t := strings.TrimLeft(line, " \t")
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		case strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
			fence = t[:3]
			continue
		case strings.HasPrefix(t, ">"):
			continue
		}
		for i, part := range strings.Split(line, "`") {
			if i%2 == 0 {
				b.WriteString(part)
			}
		}
	}
	return b.String()
}

// maxScan bounds how much of an answer writtenToolCall looks through, and maxObjects how many
// JSON objects it tries to read there.
const (
	maxScan    = 64 << 10
	maxObjects = 64
)

// writtenToolCall finds a tool call written as text: a JSON object whose "name" (or "tool", or
// "function": {"name"}) is a tool isTool knows and that carries "arguments" (or "parameters",
// "args", "input"), or a <tool_call> envelope around such an object or naming a tool. Prose that
// merely mentions a tool is not one.
func writtenToolCall(text string, isTool func(string) bool) (string, bool) {
	if len(text) > maxScan {
		text = text[:maxScan]
	}
	if i := strings.Index(text, "<tool_call>"); i >= 0 {
		body := text[i+len("<tool_call>"):]
		if j := strings.Index(body, "</tool_call>"); j >= 0 {
			body = body[:j]
		}
		if name, ok := callObject(body, isTool); ok {
			return name, true
		}
		if f := strings.Fields(body); len(f) > 0 {
			if n := strings.Trim(f[0], "\"'`:({"); isTool(n) {
				return n, true
			}
		}
	}
	return callObject(text, isTool)
}

// callObject reads the JSON objects that start in text, in order, and returns the first that
// is a call of a known tool.
func callObject(text string, isTool func(string) bool) (string, bool) {
	tried := 0
	for off := 0; off < len(text) && tried < maxObjects; {
		i := strings.IndexByte(text[off:], '{')
		if i < 0 {
			break
		}
		off += i
		tried++
		var obj map[string]json.RawMessage
		if json.NewDecoder(strings.NewReader(text[off:])).Decode(&obj) == nil {
			if name, ok := callName(obj); ok && isTool(name) {
				return name, true
			}
		}
		off++
	}
	return "", false
}

func callName(obj map[string]json.RawMessage) (string, bool) {
	hasArgs := false
	for _, k := range []string{"arguments", "parameters", "args", "input"} {
		if v, ok := obj[k]; ok && len(bytes.TrimSpace(v)) > 0 {
			hasArgs = true
		}
	}
	var name string
	for _, k := range []string{"name", "tool", "tool_name"} {
		if json.Unmarshal(obj[k], &name) == nil && name != "" {
			return name, hasArgs
		}
	}
	var fn struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(obj["function"], &fn) == nil && fn.Name != "" {
		return fn.Name, hasArgs || len(fn.Arguments) > 0
	}
	return "", false
}

// noticeTruncated sends loop.truncated, once per turn, when a response was cut at the output
// limit, so the model continues where it stopped (its partial text stays in the history; calls
// cut short got an error result and did not run). A second cut in the turn ends it with
// max_tokens, as it always did.
func (t *turn) noticeTruncated(callsCut bool) bool {
	if t.nudges.truncated {
		return false
	}
	t.nudges.truncated = true
	t.nudge("truncated", t.texts().Render("loop.truncated", prompts.Run{"MAX_TOKENS": strconv.Itoa(t.set.MaxTokens), "CALLS_CUT": callsCut}))
	return true
}
