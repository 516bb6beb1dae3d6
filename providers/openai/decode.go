package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/providers"
)

// decoder turns the data of the server-sent events of one chat-completions stream into neutral
// events. It is a pure state machine: it never reads, blocks or allocates a goroutine, so tests
// and the fuzzer drive it directly with event data.
//
// Policy, for the cases where servers differ:
//   - Completed is emitted at `data: [DONE]`, or at EOF when a finish_reason was seen; a stream
//     that ends with neither is truncated and fails with kind network ("the stream ended early").
//   - A second finish_reason (OpenRouter repeats it on its usage chunk) changes nothing.
//   - Tool calls are keyed by the wire index in order of first appearance, so an index that starts
//     at 1 is fine; the neutral Index is that order (0, 1, ...). A call is completed when the
//     finish_reason arrives (or at the end), with its arguments validated as one JSON object; a
//     call without a name or with arguments that are not a JSON object is dropped with a Notice
//     (carrying its Index and ToolCallID) instead of a ToolCallCompleted.
//   - A refusal is streamed as text and the stream completes with StopRefusal.
//   - An error (a top-level `error` object in a chunk, or an `event: error` frame) fails the
//     stream, even after a finish_reason: the user sees what the server said.
type decoder struct {
	calls     []toolCall
	finish    string
	sawFinish bool
	refusal   bool
	ended     bool
	idPrefix  string
	// who names the server in messages ("OpenAI", "Ollama").
	who string
	// scratch is reused to unescape strings.
	scratch []byte
}

type toolCall struct {
	wireIndex int
	id, name  string
	args      []byte
	started   bool
	done      bool
}

// emitFunc receives one event and reports whether the consumer wants more.
type emitFunc func(providers.Event) bool

// event handles the data of one SSE event whose `event:` field is typ. It returns false when the
// stream is over: a terminal event was emitted, or the consumer stopped.
func (d *decoder) event(typ string, data []byte, emit emitFunc) bool {
	if d.ended {
		return false
	}
	switch typ {
	case "", "message":
	case "error":
		return d.fail(d.inStreamError(data), emit)
	default:
		// Other event types are not part of chat completions; skip them.
		return true
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return true
	}
	if string(data) == "[DONE]" {
		return d.finishStream(emit)
	}
	// One pass: choices are decoded in place as the walk reaches them; the usage and an error
	// object are handled after it, so a chunk carrying both reports its usage before failing.
	var usage []byte
	hasError := false
	end := jscan.Members(data, 0, func(k []byte, vi int) int {
		ve, kind := 0, byte(0)
		switch string(k) {
		case "choices":
			if data[vi] == '[' {
				return d.choicesAt(data, vi, emit)
			}
		case "usage":
			ve, kind = jscan.ValueEnd(data, vi)
			if ve < 0 {
				return -1
			}
			if kind == jscan.KindObject {
				usage = data[vi:ve]
			}
			return ve
		case "error":
			ve, kind = jscan.ValueEnd(data, vi)
			if ve < 0 {
				return -1
			}
			hasError = kind != jscan.KindNull
			return ve
		}
		ve, _ = jscan.ValueEnd(data, vi)
		return ve
	})
	if d.ended {
		return false
	}
	if end < 0 || jscan.SkipWS(data, end) != len(data) {
		return d.fail(d.malformed(data, jscan.ErrSyntax), emit)
	}
	if usage != nil {
		if u, ok := parseUsage(usage); ok && !emit(providers.Event{Type: providers.EventUsage, Usage: u}) {
			return d.stop()
		}
	}
	if hasError {
		return d.fail(d.inStreamError(data), emit)
	}
	return true
}

// end is called when the body ended (readErr nil) or reading it failed.
func (d *decoder) end(readErr *providers.Error, emit emitFunc) {
	if d.ended {
		return
	}
	if readErr != nil {
		d.fail(readErr, emit)
		return
	}
	if d.sawFinish {
		d.finishStream(emit)
		return
	}
	d.fail(providers.Truncated(d.who), emit)
}

func (d *decoder) stop() bool { d.ended = true; return false }

func (d *decoder) fail(e *providers.Error, emit emitFunc) bool {
	d.ended = true
	emit(providers.Event{Type: providers.EventFailed, Err: e})
	return false
}

// finishStream completes the open tool calls and emits the one Completed event.
func (d *decoder) finishStream(emit emitFunc) bool {
	if !d.completeCalls(emit) {
		return d.stop()
	}
	d.ended = true
	emit(providers.Event{Type: providers.EventCompleted, StopReason: d.stopReason()})
	return false
}

func (d *decoder) stopReason() providers.StopReason {
	if d.refusal {
		return providers.StopRefusal
	}
	completed := false
	for i := range d.calls {
		if d.calls[i].done && d.calls[i].name != "" {
			completed = true
		}
	}
	switch d.finish {
	case "tool_calls", "function_call":
		return providers.StopToolUse
	case "length":
		return providers.StopMaxTokens
	case "content_filter":
		return providers.StopRefusal
	case "stop", "eos", "end_turn", "":
		// Some servers (older Ollama, llama.cpp templates) say "stop" after a tool call.
		if completed {
			return providers.StopToolUse
		}
		if d.finish == "" {
			return providers.StopUnknown
		}
		return providers.StopEndTurn
	}
	if completed {
		return providers.StopToolUse
	}
	return providers.StopUnknown
}

// choicesAt decodes the choices array at data[i] in place and returns its end (-1 when it is
// malformed, jscan.StopWalk when the stream ended on the way). Only choice 0 is read: agentd never asks
// for n > 1.
func (d *decoder) choicesAt(data []byte, i int, emit emitFunc) int {
	return jscan.Elements(data, i, func(vi int) int {
		if data[vi] != '{' {
			ve, _ := jscan.ValueEnd(data, vi)
			return ve
		}
		return d.choiceAt(data, vi, emit)
	})
}

func (d *decoder) choiceAt(data []byte, i int, emit emitFunc) int {
	var finish []byte
	index := int64(0)
	end := jscan.Members(data, i, func(k []byte, vi int) int {
		ve, kind := 0, byte(0)
		switch string(k) {
		case "index":
			ve, kind = jscan.ValueEnd(data, vi)
			if ve < 0 {
				return -1
			}
			if kind == jscan.KindNumber {
				n, ok := jscan.ParseInt(data[vi:ve])
				if !ok {
					return -1
				}
				index = n
			}
			return ve
		case "delta", "message":
			// "message" is what a server that ignored stream:true sends in its one whole chunk.
			// The index comes first from every server seen; a choice other than 0 is skipped.
			if data[vi] == '{' && index == 0 {
				return d.deltaAt(data, vi, emit)
			}
		case "finish_reason":
			ve, kind = jscan.ValueEnd(data, vi)
			if ve < 0 {
				return -1
			}
			if kind == jscan.KindString {
				finish = data[vi:ve]
			}
			return ve
		}
		ve, _ = jscan.ValueEnd(data, vi)
		return ve
	})
	if end < 0 || index != 0 {
		return end
	}
	if len(finish) > 2 && !d.sawFinish {
		reason, ok := jscan.Unquote(finish, &d.scratch)
		if !ok {
			return -1
		}
		d.sawFinish = true
		d.finish = reason
		if !d.completeCalls(emit) {
			d.stop()
			return jscan.StopWalk
		}
	}
	return end
}

// deltaAt decodes a delta (or whole message) object in place: its strings are collected and
// emitted after the walk, reasoning first, so OpenRouter's doubled reasoning can be told apart;
// tool-call fragments are handled as they come.
func (d *decoder) deltaAt(data []byte, i int, emit emitFunc) int {
	var content, refusal, reasoning, details []byte
	end := jscan.Members(data, i, func(k []byte, vi int) int {
		// A member is kept raw when it is of the wanted kind and at least minLen bytes long. The
		// cases share this one ValueEnd; a helper around it measured 2% slower a delta.
		var dst *[]byte
		want, minLen := byte(jscan.KindString), 1
		switch string(k) {
		case "tool_calls":
			if data[vi] == '[' {
				return d.toolCallsAt(data, vi, emit)
			}
		case "content":
			dst = &content
		case "refusal":
			dst = &refusal
		case "reasoning_content", "reasoning":
			dst, minLen = &reasoning, 3 // not "": an empty one keeps what the other field set
		case "reasoning_details":
			dst, want = &details, jscan.KindArray
		}
		ve, kind := jscan.ValueEnd(data, vi)
		if dst != nil && kind == want && ve-vi >= minLen {
			*dst = data[vi:ve]
		}
		return ve
	})
	if end < 0 {
		return end
	}
	// OpenRouter sends the same reasoning twice, as reasoning and reasoning_details; the details
	// win because they carry the signature that must go back with the history.
	if hasElements(details) {
		if !d.reasoningDetails(details, emit) {
			return jscan.StopWalk
		}
	} else if len(reasoning) > 2 {
		if !d.emitText(providers.EventThinkingDelta, reasoning, emit) {
			return jscan.StopWalk
		}
	}
	if len(content) > 2 && !d.emitText(providers.EventTextDelta, content, emit) {
		return jscan.StopWalk
	}
	if len(refusal) > 2 {
		d.refusal = true
		if !d.emitText(providers.EventTextDelta, refusal, emit) {
			return jscan.StopWalk
		}
	}
	return end
}

// emitText emits a text or thinking delta for the raw JSON string raw.
func (d *decoder) emitText(t providers.EventType, raw []byte, emit emitFunc) bool {
	s, ok := jscan.Unquote(raw, &d.scratch)
	if !ok {
		return d.fail(d.malformed(raw, jscan.ErrSyntax), emit)
	}
	return emit(providers.Event{Type: t, Text: s}) || d.stop()
}

func hasElements(arr []byte) bool {
	if arr == nil {
		return false
	}
	i := jscan.SkipWS(arr, 1)
	return i < len(arr) && arr[i] != ']'
}

// reasoningDetails handles OpenRouter's reasoning_details: reasoning.text (text, signature),
// reasoning.summary (summary) and reasoning.encrypted (data, kept as redacted thinking).
func (d *decoder) reasoningDetails(arr []byte, emit emitFunc) bool {
	ok := true
	err := jscan.EachElement(arr, func(v []byte, kind byte) bool {
		if kind != jscan.KindObject {
			return true
		}
		ev := providers.Event{Type: providers.EventThinkingDelta}
		good := true
		_, err := jscan.EachMember(v, func(k, v []byte, kind byte) bool {
			if kind != jscan.KindString {
				return true
			}
			var dst *string
			switch string(k) {
			case "text", "summary":
				dst = &ev.Text
			case "signature":
				dst = &ev.Signature
			case "data":
				dst = &ev.Redacted
			default:
				return true
			}
			*dst, good = jscan.Unquote(v, &d.scratch)
			return good
		})
		if err != nil || !good {
			ok = d.fail(d.malformed(v, jscan.ErrSyntax), emit)
			return false
		}
		if ev.Text == "" && ev.Signature == "" && ev.Redacted == "" {
			return true
		}
		if !emit(ev) {
			ok = d.stop()
		}
		return ok
	})
	if err != nil && ok {
		return d.fail(d.malformed(arr, err), emit)
	}
	return ok
}

// toolCallsAt accumulates the tool-call fragments of the array at data[i]. A fragment names its
// call by index; a fragment with a new id on an index already used starts a new call (servers
// that number every call 0), and a fragment with no index joins the last call unless it brings a
// new id.
func (d *decoder) toolCallsAt(data []byte, i int, emit emitFunc) int {
	return jscan.Elements(data, i, func(vi int) int {
		if data[vi] != '{' {
			ve, _ := jscan.ValueEnd(data, vi)
			return ve
		}
		return d.toolCallAt(data, vi, emit)
	})
}

func (d *decoder) toolCallAt(data []byte, i int, emit emitFunc) int {
	wire := -1
	var id, name, args []byte
	argsIsString := true
	end := jscan.Members(data, i, func(k []byte, vi int) int {
		ve, kind := 0, byte(0)
		switch string(k) {
		case "index":
			ve, kind = jscan.ValueEnd(data, vi)
			if ve < 0 {
				return -1
			}
			if kind == jscan.KindNumber {
				if n, ok := jscan.ParseInt(data[vi:ve]); ok && n >= 0 && n < 1<<20 {
					wire = int(n)
				}
			}
			return ve
		case "id":
			ve, kind = jscan.ValueEnd(data, vi)
			if ve < 0 {
				return -1
			}
			if kind == jscan.KindString && ve-vi > 2 {
				id = data[vi:ve]
			}
			return ve
		case "function":
			if data[vi] == '{' {
				return jscan.Members(data, vi, func(k []byte, vi int) int {
					ve, kind := jscan.ValueEnd(data, vi)
					if ve < 0 {
						return -1
					}
					switch string(k) {
					case "name":
						if kind == jscan.KindString && ve-vi > 2 {
							name = data[vi:ve]
						}
					case "arguments":
						switch kind {
						case jscan.KindString:
							args = data[vi:ve]
						case jscan.KindObject:
							// A few servers send the arguments as an object, not a string.
							args, argsIsString = data[vi:ve], false
						}
					}
					return ve
				})
			}
		}
		ve, _ = jscan.ValueEnd(data, vi)
		return ve
	})
	if end < 0 {
		return end
	}
	if !d.addFragment(wire, id, name, args, argsIsString, emit) {
		return jscan.StopWalk
	}
	return end
}

// addFragment applies one tool-call fragment; it reports false when the stream ended.
func (d *decoder) addFragment(wire int, id, name, args []byte, argsIsString bool, emit emitFunc) bool {
	var idStr, nameStr, frag string
	ok1, ok2, ok3 := true, true, true
	if id != nil {
		idStr, ok1 = jscan.Unquote(id, &d.scratch)
	}
	if !ok1 {
		return d.fail(d.malformed(id, jscan.ErrSyntax), emit)
	}
	i := d.findCall(wire, idStr)
	c := &d.calls[i]
	if name != nil && c.name == "" {
		nameStr, ok2 = jscan.Unquote(name, &d.scratch)
		c.name = nameStr
	}
	if idStr != "" && c.id == "" {
		c.id = idStr
	}
	if args != nil {
		if argsIsString {
			if len(args) > 2 {
				frag, ok3 = jscan.Unquote(args, &d.scratch)
			}
		} else {
			frag = string(args)
		}
	}
	if !ok2 || !ok3 {
		return d.fail(d.malformed(append(name, args...), jscan.ErrSyntax), emit)
	}
	if c.done {
		return true
	}
	if !c.started {
		c.args = append(c.args, frag...)
		if c.name == "" {
			return true
		}
		c.started = true
		if c.id == "" {
			c.id = d.syntheticID(i)
		}
		if !emit(providers.Event{Type: providers.EventToolCallStarted, Index: i, ToolCallID: c.id, ToolName: c.name}) {
			return d.stop()
		}
		if len(c.args) > 0 {
			return emit(providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, ToolCallID: c.id, Text: string(c.args)}) || d.stop()
		}
		return true
	}
	if frag == "" {
		return true
	}
	c.args = append(c.args, frag...)
	return emit(providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, ToolCallID: c.id, Text: frag}) || d.stop()
}

// findCall returns the slot of the call a fragment belongs to, adding one when it is new.
func (d *decoder) findCall(wire int, id string) int {
	if wire < 0 {
		if n := len(d.calls); n > 0 && (id == "" || id == d.calls[n-1].id) {
			return n - 1
		}
	} else {
		for i := len(d.calls) - 1; i >= 0; i-- {
			c := &d.calls[i]
			if c.wireIndex != wire {
				continue
			}
			if id != "" && c.id != "" && id != c.id {
				break // the same index reused for a new call
			}
			return i
		}
	}
	d.calls = append(d.calls, toolCall{wireIndex: wire})
	return len(d.calls) - 1
}

func (d *decoder) syntheticID(i int) string {
	if d.idPrefix == "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		d.idPrefix = "call_" + strconv.FormatUint(uint64(b[0])<<40|uint64(b[1])<<32|uint64(b[2])<<24|uint64(b[3])<<16|uint64(b[4])<<8|uint64(b[5]), 36)
	}
	return d.idPrefix + "_" + strconv.Itoa(i)
}

// completeCalls validates and completes every open call, once.
func (d *decoder) completeCalls(emit emitFunc) bool {
	for i := range d.calls {
		c := &d.calls[i]
		if c.done {
			continue
		}
		c.done = true
		if c.name == "" {
			if !emit(providers.Event{Type: providers.EventNotice, Index: i, ToolCallID: c.id,
				Text: "dropped a tool call from the model because it had no tool name"}) {
				return false
			}
			continue
		}
		args, ok := validArgs(c.args)
		if !ok {
			if !emit(providers.Event{Type: providers.EventNotice, Index: i, ToolCallID: c.id, ToolName: c.name,
				Text: "dropped the model's call to " + c.name + " because its arguments are not a valid JSON object: " + clip.String(string(c.args), 120, "…")}) {
				return false
			}
			continue
		}
		if !emit(providers.Event{Type: providers.EventToolCallCompleted, Index: i, ToolCallID: c.id, ToolName: c.name, Args: args}) {
			return false
		}
	}
	return true
}

// validArgs returns the arguments as a JSON object: empty arguments (a tool without
// parameters) become {}; anything that is not one JSON object is refused.
func validArgs(b []byte) (json.RawMessage, bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return json.RawMessage("{}"), true
	}
	if t[0] != '{' || !json.Valid(t) {
		return nil, false
	}
	return json.RawMessage(bytes.Clone(t)), true
}

// parseUsage reads an OpenAI usage object. Input excludes cache reads (prompt_tokens includes
// them); Output is completion_tokens, reasoning included; DeepSeek's prompt_cache_hit_tokens
// stand in for cached_tokens when those are absent.
func parseUsage(obj []byte) (providers.Usage, bool) {
	var u providers.Usage
	var prompt, cached, hit int
	seen := false
	num := func(v []byte, kind byte) int {
		if kind != jscan.KindNumber {
			return 0
		}
		n, ok := jscan.ParseInt(v)
		if !ok || n < 0 || n > 1<<40 {
			return 0
		}
		return int(n)
	}
	_, _ = jscan.EachMember(obj, func(k, v []byte, kind byte) bool {
		switch string(k) {
		case "prompt_tokens":
			prompt, seen = num(v, kind), true
		case "completion_tokens":
			u.Output, seen = num(v, kind), true
		case "prompt_cache_hit_tokens":
			hit = num(v, kind)
		case "prompt_tokens_details":
			if kind == jscan.KindObject {
				_, _ = jscan.EachMember(v, func(k, v []byte, kind byte) bool {
					switch string(k) {
					case "cached_tokens":
						cached = num(v, kind)
					case "cache_write_tokens":
						u.CacheWrite = num(v, kind)
					}
					return true
				})
			}
		case "completion_tokens_details":
			if kind == jscan.KindObject {
				_, _ = jscan.EachMember(v, func(k, v []byte, kind byte) bool {
					if string(k) == "reasoning_tokens" {
						u.Thinking = num(v, kind)
					}
					return true
				})
			}
		}
		return true
	})
	if cached == 0 {
		cached = hit
	}
	if cached > prompt {
		cached = prompt
	}
	u.CacheRead = cached
	u.Input = prompt - cached
	return u, seen
}

// inStreamError classifies an error payload that arrived inside a 200 stream: a top-level
// {"error":{...}} object or the data of an `event: error` frame. The status comes from the body
// (status_code, or a numeric code) when it has one; the kind from its code or type. This path is
// cold, so it uses encoding/json.
func (d *decoder) inStreamError(payload []byte) *providers.Error {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	var obj struct {
		Message    string          `json:"message"`
		Type       string          `json:"type"`
		Code       json.RawMessage `json:"code"`
		Status     json.RawMessage `json:"status"`
		StatusCode json.RawMessage `json:"status_code"`
		Metadata   struct {
			Raw string `json:"raw"`
		} `json:"metadata"`
	}
	inner := []byte(nil)
	if json.Unmarshal(payload, &env) == nil {
		inner = bytes.TrimSpace(env.Error)
	}
	var msg string
	switch {
	case len(inner) > 0 && inner[0] == '{':
		_ = json.Unmarshal(inner, &obj)
	case len(inner) > 0 && inner[0] == '"':
		_ = json.Unmarshal(inner, &msg)
	default:
		_ = json.Unmarshal(payload, &obj)
	}
	if msg == "" {
		msg = obj.Message
	}
	if obj.Metadata.Raw != "" {
		msg = strings.TrimSpace(msg + ": " + obj.Metadata.Raw)
	}
	status := 0
	for _, raw := range []json.RawMessage{obj.StatusCode, obj.Code, obj.Status} {
		var n int
		if json.Unmarshal(raw, &n) == nil && n >= 100 && n < 600 {
			status = n
			break
		}
	}
	var code string
	if json.Unmarshal(obj.Code, &code) != nil || code == "" {
		code = obj.Type
	}
	if msg == "" {
		msg = clip.String(string(payload), 300, "…")
	}
	return providers.ClassifyStreamError(d.who, code, msg, status)
}

// malformed is the error for event data that is not the JSON a chunk should be.
func (d *decoder) malformed(data []byte, err error) *providers.Error {
	e := providers.ProtocolError(d.who, "invalid JSON in a data line: "+clip.String(string(data), 60, "…"))
	e.Detail = err.Error() + ": " + clip.String(string(data), 2000, "…")
	return e
}
