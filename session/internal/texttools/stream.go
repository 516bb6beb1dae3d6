package texttools

import (
	"bytes"
	"encoding/json"
	"iter"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentd-dev/agentd/providers"
)

// IndexBase is where the indexes of the calls Events makes start, far from any a dialect gives
// native calls, so the two never share an index in one response.
const IndexBase = 1 << 20

// Events reads a provider's stream under the text protocol: text deltas go through an Extractor,
// so the prose comes out as text deltas and each envelope as a ToolCallStarted followed by a
// ToolCallCompleted (or, when it could not be parsed, by a Notice naming the call with the text
// invalid returns, which the loop turns into the failed result the model reads). Call ids are
// idPrefix_N. A model imitating a <tool_response> is cut there: the stream is left (which closes
// the connection) and ends as a completed turn. Every other event passes through.
func Events(seq iter.Seq[providers.Event], idPrefix string, invalid func(Call) string) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		r := reader{idPrefix: idPrefix, invalid: invalid, yield: yield}
		for ev := range seq {
			if !r.event(ev) {
				return
			}
		}
	}
}

// reader is Events' state: one reply's extractor and the calls it has numbered.
type reader struct {
	x        Extractor
	buf      []Piece
	n        int
	idPrefix string
	invalid  func(Call) string
	yield    func(providers.Event) bool
}

// call yields one envelope as a started call and its completion, or its notice.
func (r *reader) call(c *Call) bool {
	idx := IndexBase + r.n
	id := r.idPrefix + "_" + strconv.Itoa(r.n)
	r.n++
	if !r.yield(providers.Event{Type: providers.EventToolCallStarted, Index: idx, ToolCallID: id, ToolName: c.Name}) {
		return false
	}
	ev := providers.Event{Type: providers.EventToolCallCompleted, Index: idx, ToolCallID: id, ToolName: c.Name, Args: c.Args}
	if c.Err != "" {
		ev = providers.Event{Type: providers.EventNotice, Index: idx, ToolCallID: id, ToolName: c.Name, Text: r.invalid(*c)}
	}
	return r.yield(ev)
}

func (r *reader) emit(pieces []Piece) bool {
	for _, p := range pieces {
		if p.Call == nil {
			if !r.yield(providers.Event{Type: providers.EventTextDelta, Text: p.Prose}) {
				return false
			}
			continue
		}
		if !r.call(p.Call) {
			return false
		}
	}
	return true
}

// event handles one event of the stream; false means the stream is over for the reader.
func (r *reader) event(ev providers.Event) bool {
	switch ev.Type {
	case providers.EventTextDelta:
		r.buf = r.x.Feed(ev.Text, r.buf[:0])
		if !r.emit(r.buf) {
			return false
		}
		if r.x.Cut() {
			r.yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
			return false
		}
	case providers.EventCompleted, providers.EventFailed:
		r.buf = r.x.Flush(r.buf[:0])
		if !r.emit(r.buf) {
			return false
		}
		r.yield(ev)
		return false
	default:
		return r.yield(ev)
	}
	return true
}

// Result is one tool result as the text protocol shows it.
type Result struct {
	Name    string
	Output  string
	IsError bool
}

// Render turns a neutral history into the text protocol's: an assistant message's tool calls
// become <tool_call> envelopes after its text, and a user message's tool results become one text
// part, rendered by results (the prompt config's layout.tool_results), before the rest of the
// message. Thinking and images stay as they are. The history itself is not changed.
func Render(msgs []providers.Message, results func([]Result) string) []providers.Message {
	out := make([]providers.Message, 0, len(msgs))
	for _, m := range msgs {
		if !hasToolParts(m) {
			out = append(out, m)
			continue
		}
		switch m.Role {
		case providers.RoleAssistant:
			var text strings.Builder
			var parts []providers.Part
			for _, p := range m.Parts {
				switch p.Type {
				case providers.PartText:
					text.WriteString(p.Text)
				case providers.PartToolCall:
					if text.Len() > 0 && !strings.HasSuffix(text.String(), "\n") {
						text.WriteByte('\n')
					}
					text.WriteString(Envelope(p.ToolName, p.Args))
					text.WriteByte('\n')
				default:
					parts = append(parts, p)
				}
			}
			parts = append(parts, providers.Part{Type: providers.PartText, Text: strings.TrimRight(text.String(), "\n")})
			out = append(out, providers.Message{Role: m.Role, Parts: parts})
		default:
			var res []Result
			var rest []providers.Part
			for _, p := range m.Parts {
				if p.Type == providers.PartToolResult {
					res = append(res, Result{Name: p.ToolName, Output: EscapeResponse(p.Text), IsError: p.IsError})
					continue
				}
				rest = append(rest, p)
			}
			parts := append([]providers.Part{{Type: providers.PartText, Text: results(res)}}, rest...)
			out = append(out, providers.Message{Role: m.Role, Parts: parts})
		}
	}
	return out
}

func hasToolParts(m providers.Message) bool {
	for _, p := range m.Parts {
		if p.Type == providers.PartToolCall || p.Type == providers.PartToolResult {
			return true
		}
	}
	return false
}

// Envelope writes one call as the model is told to: <tool_call>{"name":…,"arguments":…}</tool_call>,
// with the keys in that order.
func Envelope(name string, args json.RawMessage) string {
	a := bytes.TrimSpace(args)
	if len(a) == 0 || !json.Valid(a) {
		a = []byte("{}")
	}
	n, _ := json.Marshal(name)
	return `<tool_call>{"name": ` + string(n) + `, "arguments": ` + string(a) + `}</tool_call>`
}

// responseTag matches what could open or close a <tool_response> envelope (or open a call) in a
// tool's output: in any case, with space before the '>'.
var responseTag = regexp.MustCompile(`(?i)<(/?)\s*(tool_response|tool_call)\b`)

// EscapeResponse keeps a tool's output from ending its <tool_response> envelope or passing for a
// call: <tool_response and </tool_response become <\tool_response and <\/tool_response, which
// read the same to the model and match no tag.
func EscapeResponse(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	return responseTag.ReplaceAllStringFunc(s, func(m string) string { return "<\\" + m[1:] })
}
