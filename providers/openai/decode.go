package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/buger/jsonparser"

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
	var choices, usage, errObj []byte
	err := jsonparser.ObjectEach(data, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "choices":
			if t == jsonparser.Array {
				choices = v
			}
		case "usage":
			if t == jsonparser.Object {
				usage = v
			}
		case "error":
			if t != jsonparser.Null {
				errObj = data
			}
		}
		return nil
	})
	if err != nil {
		return d.fail(d.malformed(data, err), emit)
	}
	if choices != nil {
		if !d.choices(choices, emit) {
			return false
		}
	}
	if usage != nil {
		if u, ok := parseUsage(usage); ok && !emit(providers.Event{Type: providers.EventUsage, Usage: u}) {
			return d.stop()
		}
	}
	if errObj != nil {
		return d.fail(d.inStreamError(errObj), emit)
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

// choices handles the choices array; only choice 0 is read (agentd never asks for n > 1).
func (d *decoder) choices(arr []byte, emit emitFunc) bool {
	ok := true
	_, err := jsonparser.ArrayEach(arr, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
		if !ok || t != jsonparser.Object {
			return
		}
		ok = d.choice(v, emit)
	})
	if err != nil && ok && !d.ended {
		return d.fail(d.malformed(arr, err), emit)
	}
	return ok
}

func (d *decoder) choice(obj []byte, emit emitFunc) bool {
	var delta, finish []byte
	index := int64(0)
	var perr error
	err := jsonparser.ObjectEach(obj, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "index":
			if t == jsonparser.Number {
				index, perr = jsonparser.ParseInt(v)
			}
		case "delta", "message":
			// "message" is what a server that ignored stream:true sends in its one whole chunk.
			if t == jsonparser.Object {
				delta = v
			}
		case "finish_reason":
			if t == jsonparser.String {
				finish = v
			}
		}
		return nil
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		return d.fail(d.malformed(obj, err), emit)
	}
	if index != 0 {
		return true
	}
	if delta != nil && !d.delta(delta, emit) {
		return false
	}
	if len(finish) > 0 && !d.sawFinish {
		d.sawFinish = true
		d.finish = string(finish)
		if !d.completeCalls(emit) {
			return d.stop()
		}
	}
	return true
}

func (d *decoder) delta(obj []byte, emit emitFunc) bool {
	var content, refusal, reasoning, details, calls []byte
	err := jsonparser.ObjectEach(obj, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "content":
			if t == jsonparser.String {
				content = v
			}
		case "refusal":
			if t == jsonparser.String {
				refusal = v
			}
		case "reasoning_content", "reasoning":
			if t == jsonparser.String && len(v) > 0 {
				reasoning = v
			}
		case "reasoning_details":
			if t == jsonparser.Array {
				details = v
			}
		case "tool_calls":
			if t == jsonparser.Array {
				calls = v
			}
		}
		return nil
	})
	if err != nil {
		return d.fail(d.malformed(obj, err), emit)
	}
	// OpenRouter sends the same reasoning twice, as reasoning and reasoning_details; the details
	// win because they carry the signature that must go back with the history.
	if len(details) > 2 {
		if !d.reasoningDetails(details, emit) {
			return false
		}
	} else if len(reasoning) > 0 {
		s, ok := str(reasoning)
		if !ok {
			return d.fail(d.malformed(obj, jsonparser.MalformedStringEscapeError), emit)
		}
		if !emit(providers.Event{Type: providers.EventThinkingDelta, Text: s}) {
			return d.stop()
		}
	}
	if len(content) > 0 {
		s, ok := str(content)
		if !ok {
			return d.fail(d.malformed(obj, jsonparser.MalformedStringEscapeError), emit)
		}
		if !emit(providers.Event{Type: providers.EventTextDelta, Text: s}) {
			return d.stop()
		}
	}
	if len(refusal) > 0 {
		s, ok := str(refusal)
		if !ok {
			return d.fail(d.malformed(obj, jsonparser.MalformedStringEscapeError), emit)
		}
		d.refusal = true
		if !emit(providers.Event{Type: providers.EventTextDelta, Text: s}) {
			return d.stop()
		}
	}
	if calls != nil {
		return d.toolCalls(calls, emit)
	}
	return true
}

// reasoningDetails handles OpenRouter's reasoning_details: reasoning.text (text, signature),
// reasoning.summary (summary) and reasoning.encrypted (data, kept as redacted thinking).
func (d *decoder) reasoningDetails(arr []byte, emit emitFunc) bool {
	ok := true
	_, err := jsonparser.ArrayEach(arr, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
		if !ok || t != jsonparser.Object {
			return
		}
		var ev providers.Event
		ev.Type = providers.EventThinkingDelta
		good := true
		_ = jsonparser.ObjectEach(v, func(k, v []byte, t jsonparser.ValueType, _ int) error {
			if t != jsonparser.String {
				return nil
			}
			s, sok := str(v)
			good = good && sok
			switch string(k) {
			case "text", "summary":
				ev.Text = s
			case "signature":
				ev.Signature = s
			case "data":
				ev.Redacted = s
			}
			return nil
		})
		if !good {
			ok = d.fail(d.malformed(v, jsonparser.MalformedStringEscapeError), emit)
			return
		}
		if ev.Text == "" && ev.Signature == "" && ev.Redacted == "" {
			return
		}
		if !emit(ev) {
			ok = d.stop()
		}
	})
	if err != nil && ok {
		return d.fail(d.malformed(arr, err), emit)
	}
	return ok
}

// toolCalls accumulates tool-call fragments. A fragment names its call by index; a fragment with
// a new id on an index already used by a finished-looking call starts a new call (servers that
// number every call 0), and a fragment with no index joins the last call unless it brings a new id.
func (d *decoder) toolCalls(arr []byte, emit emitFunc) bool {
	ok := true
	_, err := jsonparser.ArrayEach(arr, func(v []byte, t jsonparser.ValueType, _ int, _ error) {
		if !ok || t != jsonparser.Object {
			return
		}
		ok = d.toolCall(v, emit)
	})
	if err != nil && ok {
		return d.fail(d.malformed(arr, err), emit)
	}
	return ok
}

func (d *decoder) toolCall(obj []byte, emit emitFunc) bool {
	wire := -1
	var id, name, args []byte
	argsIsString := true
	var perr error
	err := jsonparser.ObjectEach(obj, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "index":
			if t == jsonparser.Number {
				var n int64
				n, perr = jsonparser.ParseInt(v)
				if n >= 0 && n < 1<<20 {
					wire = int(n)
				}
			}
		case "id":
			if t == jsonparser.String {
				id = v
			}
		case "function":
			if t == jsonparser.Object {
				return jsonparser.ObjectEach(v, func(k, v []byte, t jsonparser.ValueType, _ int) error {
					switch string(k) {
					case "name":
						if t == jsonparser.String {
							name = v
						}
					case "arguments":
						switch t {
						case jsonparser.String:
							args = v
						case jsonparser.Object:
							// A few servers send the arguments as an object, not a string.
							args, argsIsString = v, false
						}
					}
					return nil
				})
			}
		}
		return nil
	})
	if err == nil {
		err = perr
	}
	if err != nil {
		return d.fail(d.malformed(obj, err), emit)
	}
	i := d.findCall(wire, id)
	c := &d.calls[i]
	if len(id) > 0 && c.id == "" {
		s, _ := str(id)
		c.id = s
	}
	if len(name) > 0 && c.name == "" {
		s, _ := str(name)
		c.name = s
	}
	var frag string
	if len(args) > 0 {
		if argsIsString {
			s, ok := str(args)
			if !ok {
				return d.fail(d.malformed(obj, jsonparser.MalformedStringEscapeError), emit)
			}
			frag = s
		} else {
			frag = string(args)
		}
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
func (d *decoder) findCall(wire int, id []byte) int {
	if wire < 0 {
		if n := len(d.calls); n > 0 && (len(id) == 0 || string(id) == d.calls[n-1].id) {
			return n - 1
		}
	} else {
		for i := len(d.calls) - 1; i >= 0; i-- {
			c := &d.calls[i]
			if c.wireIndex != wire {
				continue
			}
			if len(id) > 0 && c.id != "" && string(id) != c.id {
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
				Text: "dropped the model's call to " + c.name + " because its arguments are not a valid JSON object: " + clip(string(c.args), 120)}) {
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
	num := func(v []byte, t jsonparser.ValueType) int {
		if t != jsonparser.Number {
			return 0
		}
		n, err := jsonparser.ParseInt(v)
		if err != nil || n < 0 || n > 1<<40 {
			return 0
		}
		return int(n)
	}
	_ = jsonparser.ObjectEach(obj, func(k, v []byte, t jsonparser.ValueType, _ int) error {
		switch string(k) {
		case "prompt_tokens":
			prompt, seen = num(v, t), true
		case "completion_tokens":
			u.Output, seen = num(v, t), true
		case "prompt_cache_hit_tokens":
			hit = num(v, t)
		case "prompt_tokens_details":
			if t == jsonparser.Object {
				_ = jsonparser.ObjectEach(v, func(k, v []byte, t jsonparser.ValueType, _ int) error {
					switch string(k) {
					case "cached_tokens":
						cached = num(v, t)
					case "cache_write_tokens":
						u.CacheWrite = num(v, t)
					}
					return nil
				})
			}
		case "completion_tokens_details":
			if t == jsonparser.Object {
				_ = jsonparser.ObjectEach(v, func(k, v []byte, t jsonparser.ValueType, _ int) error {
					if string(k) == "reasoning_tokens" {
						u.Thinking = num(v, t)
					}
					return nil
				})
			}
		}
		return nil
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
// (status_code, or a numeric code) when it has one; the kind from its code or type.
func (d *decoder) inStreamError(payload []byte) *providers.Error {
	inner, t, _, err := jsonparser.Get(payload, "error")
	if err != nil || t != jsonparser.Object {
		inner = payload
	}
	status := 0
	for _, key := range []string{"status_code", "code", "status"} {
		if v, t, _, err := jsonparser.Get(inner, key); err == nil && t == jsonparser.Number {
			if n, err := jsonparser.ParseInt(v); err == nil && n >= 100 && n < 600 {
				status = int(n)
				break
			}
		}
	}
	msg, _ := jsonparser.GetString(inner, "message")
	if raw, _ := jsonparser.GetString(inner, "metadata", "raw"); raw != "" {
		msg = strings.TrimSpace(msg + ": " + raw)
	}
	code, _ := jsonparser.GetString(inner, "code")
	if code == "" {
		code, _ = jsonparser.GetString(inner, "type")
	}
	if msg == "" {
		if s, err := jsonparser.GetString(payload, "error"); err == nil {
			msg = s
		} else {
			msg = clip(string(payload), 300)
		}
	}
	return providers.ClassifyStreamError(d.who, code, msg, status)
}

// malformed is the error for event data that is not the JSON a chunk should be.
func (d *decoder) malformed(data []byte, err error) *providers.Error {
	e := providers.ProtocolError(d.who, "invalid JSON in a data line: "+clip(string(data), 60))
	e.Detail = err.Error() + ": " + clip(string(data), 2000)
	return e
}

// str decodes the inside of a JSON string, without an allocation beyond the result.
func str(v []byte) (string, bool) {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v), true
	}
	s, err := jsonparser.ParseString(v)
	return s, err == nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
