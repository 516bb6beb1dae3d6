package anthropic

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

// kind is an event, block or delta type, decoded without allocating a string.
type kind uint8

const (
	kOther kind = iota
	kMessageStart
	kMessageDelta
	kMessageStop
	kBlockStart
	kBlockDelta
	kBlockStop
	kPing
	kError
	kText
	kThinking
	kRedactedThinking
	kToolUse
	kServerToolUse
	kTextDelta
	kThinkingDelta
	kSignatureDelta
	kInputJSONDelta
)

func (k *kind) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' {
		*k = kindOf(b[1 : len(b)-1])
	} else {
		*k = kOther
	}
	return nil
}

// kindOf looks a raw type name up; a switch on string(b) does not allocate, and unlike a map
// literal it costs the package's init nothing.
func kindOf(b []byte) kind {
	switch string(b) {
	case "message_start":
		return kMessageStart
	case "message_delta":
		return kMessageDelta
	case "message_stop":
		return kMessageStop
	case "content_block_start":
		return kBlockStart
	case "content_block_delta":
		return kBlockDelta
	case "content_block_stop":
		return kBlockStop
	case "ping":
		return kPing
	case "error":
		return kError
	case "text":
		return kText
	case "thinking":
		return kThinking
	case "redacted_thinking":
		return kRedactedThinking
	case "tool_use":
		return kToolUse
	case "server_tool_use":
		return kServerToolUse
	case "text_delta":
		return kTextDelta
	case "thinking_delta":
		return kThinkingDelta
	case "signature_delta":
		return kSignatureDelta
	case "input_json_delta":
		return kInputJSONDelta
	}
	return kOther
}

type wireUsage struct {
	InputTokens              *int `json:"input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
}

type wireBlock struct {
	Type      kind            `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

type wireEvent struct {
	Type  kind `json:"type"`
	Index int  `json:"index"`
	Delta struct {
		Type        kind   `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	ContentBlock *wireBlock `json:"content_block"`
	Message      *struct {
		Usage wireUsage `json:"usage"`
	} `json:"message"`
	Usage *wireUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

type openBlock struct {
	kind kind
	id   string
	name string
	args strings.Builder
	// input is content_block_start's input, used when no input_json_delta followed.
	input json.RawMessage
}

// decoder turns the events of one stream into providers.Events.
type decoder struct {
	em     *providers.Emitter
	w      wireEvent
	blocks map[int]*openBlock
	usage  providers.Usage
	stop   providers.StopReason

	// fast is the content_block_delta fast path's scratch: raw values found by one jscan walk,
	// so a delta costs no allocation but its text.
	fast fastDelta
	// noFast turns the fast path off (tests compare both paths).
	noFast bool
}

type fastDelta struct {
	typ, index, delta []byte
	deltaType, value  []byte
	buf               []byte // unquote scratch, kept across events
}

// fastBlockDelta handles a well-formed content_block_delta without encoding/json. It reports
// false when the event is anything else, or has a key repeated, a value of an unexpected type or
// a field a delta does not carry, for the general path to handle.
func (d *decoder) fastBlockDelta(data []byte) (handled, more bool) {
	f := &d.fast
	f.typ, f.index, f.delta, f.deltaType, f.value = nil, nil, nil, nil, nil
	var seen uint8
	end := jscan.Members(data, 0, func(key []byte, vi int) int {
		ve, kind := jscan.ValueEnd(data, vi)
		if ve < 0 {
			return -1
		}
		var bit uint8
		switch jscan.Canonical(key, "type", "index", "delta", "content_block", "message", "usage", "error", "request_id") {
		case "type":
			if kind != jscan.KindString {
				return -1
			}
			bit, f.typ = 1, data[vi:ve]
		case "index":
			if kind != jscan.KindNumber {
				return -1
			}
			bit, f.index = 2, data[vi:ve]
		case "delta":
			if kind != jscan.KindObject {
				return -1
			}
			bit, f.delta = 4, data[vi:ve]
		case "":
			return ve
		default:
			return -1
		}
		if seen&bit != 0 {
			return -1
		}
		seen |= bit
		return ve
	})
	if end < 0 || jscan.SkipWS(data, end) != len(data) || string(f.typ) != `"content_block_delta"` || f.index == nil || f.delta == nil {
		return false, false
	}
	var kinds uint8
	var valueKey string
	if jscan.Members(f.delta, 0, func(key []byte, vi int) int {
		ve, kind := jscan.ValueEnd(f.delta, vi)
		if ve < 0 {
			return -1
		}
		k := jscan.Canonical(key, "type", "text", "thinking", "partial_json", "signature", "stop_reason")
		var bit uint8
		switch k {
		case "":
			return ve
		case "type":
			bit, f.deltaType = 1, f.delta[vi:ve]
		case "stop_reason":
			return -1
		default:
			if f.value != nil {
				return -1 // two payloads: leave the choice to the general path
			}
			bit, f.value, valueKey = 2, f.delta[vi:ve], k
		}
		if kind != jscan.KindString || kinds&bit != 0 {
			return -1
		}
		kinds |= bit
		return ve
	}) < 0 || len(f.deltaType) < 2 {
		return false, false
	}
	idx, ok := jscan.ParseInt(f.index)
	if !ok || idx < 0 || idx > 1<<20 {
		return false, false
	}
	k := kindOf(f.deltaType[1 : len(f.deltaType)-1])
	want := ""
	switch k {
	case kTextDelta:
		want = "text"
	case kThinkingDelta:
		want = "thinking"
	case kSignatureDelta:
		want = "signature"
	case kInputJSONDelta:
		want = "partial_json"
	default:
		return false, false
	}
	v := ""
	if f.value != nil {
		if valueKey != want {
			return false, false
		}
		var ok bool
		if v, ok = jscan.Unquote(f.value, &f.buf); !ok {
			return false, false
		}
		v = httpsse.FixUTF8(v)
	}
	return true, d.delta(int(idx), k, v)
}

// event handles one SSE event; it returns false when the stream is over for the caller (ended
// or abandoned by the consumer).
func (d *decoder) event(sseType string, data []byte) bool {
	if len(data) == 0 {
		return true
	}
	if !d.noFast && (sseType == "content_block_delta" || sseType == "") {
		if handled, more := d.fastBlockDelta(data); handled {
			return more
		}
	}
	d.w = wireEvent{}
	if err := json.Unmarshal(data, &d.w); err != nil {
		d.em.Fail(providers.ProtocolError(name, "invalid JSON in a "+clipType(sseType)+" event: "+err.Error()))
		return false
	}
	w := &d.w
	switch w.Type {
	case kPing:
	case kMessageStart:
		if w.Message != nil {
			d.addUsage(&w.Message.Usage)
			return d.em.Emit(providers.Event{Type: providers.EventUsage, Usage: d.usage})
		}
	case kBlockStart:
		return d.blockStart(w.Index, w.ContentBlock)
	case kBlockDelta:
		return d.blockDelta(w)
	case kBlockStop:
		return d.blockStop(w.Index)
	case kMessageDelta:
		if w.Delta.StopReason != "" {
			d.stop = stopReason(w.Delta.StopReason)
		}
		if w.Usage != nil {
			d.addUsage(w.Usage)
			return d.em.Emit(providers.Event{Type: providers.EventUsage, Usage: d.usage})
		}
	case kMessageStop:
		// A tool_use block left open (its content_block_stop lost) is closed here, so the call
		// is completed, or refused when its arguments are cut, rather than dropped.
		for _, i := range slices.Sorted(maps.Keys(d.blocks)) {
			if !d.blockStop(i) {
				return false
			}
		}
		stop := d.stop
		if stop == "" {
			stop = providers.StopUnknown
		}
		d.em.Complete(stop)
		return false
	case kError:
		typ, msg := "", ""
		if w.Error != nil {
			typ, msg = w.Error.Type, w.Error.Message
		}
		e := providers.ClassifyStreamError(name, typ, msg, 0)
		e.RequestID = w.RequestID
		d.em.Fail(e)
		return false
	}
	// Unknown event types are ignored, as the API's versioning policy asks.
	return !d.em.Ended()
}

func (d *decoder) addUsage(u *wireUsage) {
	if u.InputTokens != nil {
		d.usage.Input = *u.InputTokens
	}
	if u.OutputTokens != nil {
		d.usage.Output = *u.OutputTokens
	}
	if u.CacheReadInputTokens != nil {
		d.usage.CacheRead = *u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens != nil {
		d.usage.CacheWrite = *u.CacheCreationInputTokens
	}
}

func (d *decoder) block(i int) *openBlock {
	if d.blocks == nil {
		d.blocks = map[int]*openBlock{}
	}
	return d.blocks[i]
}

func (d *decoder) blockStart(i int, cb *wireBlock) bool {
	if cb == nil {
		return true
	}
	if d.block(i) != nil {
		d.em.Fail(providers.ProtocolError(name, "content block started twice"))
		return false
	}
	b := &openBlock{kind: cb.Type, id: cb.ID, name: cb.Name, input: cb.Input}
	d.blocks[i] = b
	switch cb.Type {
	case kText:
		if cb.Text != "" {
			return d.em.Emit(providers.Event{Type: providers.EventTextDelta, Text: cb.Text})
		}
	case kThinking:
		if cb.Thinking != "" || cb.Signature != "" {
			return d.em.Emit(providers.Event{Type: providers.EventThinkingDelta, Text: cb.Thinking, Signature: cb.Signature})
		}
	case kRedactedThinking:
		return d.em.Emit(providers.Event{Type: providers.EventThinkingDelta, Redacted: cb.Data})
	case kToolUse:
		if cb.ID == "" || cb.Name == "" {
			d.em.Fail(providers.ProtocolError(name, "tool_use block without an id or a name"))
			return false
		}
		return d.em.Emit(providers.Event{Type: providers.EventToolCallStarted, Index: i, ToolCallID: cb.ID, ToolName: cb.Name})
	}
	// server_tool_use and other server-side blocks run on Anthropic's side; nothing to relay.
	return true
}

func (d *decoder) blockDelta(w *wireEvent) bool {
	v := ""
	switch w.Delta.Type {
	case kTextDelta:
		v = w.Delta.Text
	case kThinkingDelta:
		v = w.Delta.Thinking
	case kSignatureDelta:
		v = w.Delta.Signature
	case kInputJSONDelta:
		v = w.Delta.PartialJSON
	default:
		return true
	}
	return d.delta(w.Index, w.Delta.Type, v)
}

// delta handles one content_block_delta of kind k carrying v at block index i.
func (d *decoder) delta(i int, k kind, v string) bool {
	switch k {
	case kTextDelta:
		// A delta without its block start (a stream picked up midway) still carries text.
		if v == "" {
			return true
		}
		return d.em.Emit(providers.Event{Type: providers.EventTextDelta, Text: v})
	case kThinkingDelta:
		if v == "" {
			return true
		}
		return d.em.Emit(providers.Event{Type: providers.EventThinkingDelta, Text: v})
	case kSignatureDelta:
		return d.em.Emit(providers.Event{Type: providers.EventThinkingDelta, Signature: v})
	case kInputJSONDelta:
		b := d.block(i)
		if b == nil || b.kind != kToolUse {
			if b != nil && b.kind == kServerToolUse {
				return true
			}
			d.em.Fail(providers.ProtocolError(name, "input_json_delta outside a tool_use block"))
			return false
		}
		if v == "" {
			return true
		}
		b.args.WriteString(v)
		return d.em.Emit(providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, ToolCallID: b.id, Text: v})
	}
	return true
}

func (d *decoder) blockStop(i int) bool {
	b := d.block(i)
	if b == nil {
		return true
	}
	delete(d.blocks, i)
	if b.kind != kToolUse {
		return true
	}
	args := json.RawMessage(b.args.String())
	if len(args) == 0 {
		args = b.input
		if len(args) == 0 {
			args = emptyObject
		}
	}
	if !json.Valid(args) {
		d.em.Fail(providers.ProtocolError(name, "the arguments of tool call "+b.name+" are not valid JSON"))
		return false
	}
	return d.em.Emit(providers.Event{Type: providers.EventToolCallCompleted, Index: i, ToolCallID: b.id, ToolName: b.name, Args: args})
}

func stopReason(s string) providers.StopReason {
	switch s {
	case "end_turn", "stop_sequence", "pause_turn":
		return providers.StopEndTurn
	case "tool_use":
		return providers.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return providers.StopMaxTokens
	case "refusal":
		return providers.StopRefusal
	}
	return providers.StopUnknown
}

func clipType(t string) string {
	if t == "" {
		return "data"
	}
	return clip.String(t, 40, "")
}
