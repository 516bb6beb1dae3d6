package gemini

import (
	"encoding/json"
	"strconv"

	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/providers"
)

type wirePart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

// wireUsage holds the token counts. An odd value (a string, a float, a huge number) counts as 0
// instead of failing the chunk, exactly as the fast path reads it.
type wireUsage struct {
	PromptTokenCount        tokenCount `json:"promptTokenCount"`
	CandidatesTokenCount    tokenCount `json:"candidatesTokenCount"`
	CachedContentTokenCount tokenCount `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      tokenCount `json:"thoughtsTokenCount"`
}

type tokenCount int

func (c *tokenCount) UnmarshalJSON(b []byte) error {
	*c = tokenCount(parseCount(b))
	return nil
}

// parseCount reads a token count literal: 0 when it is not a plain non-negative integer.
func parseCount(b []byte) int {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || v < 0 || v > 1<<40 {
		return 0
	}
	return int(v)
}

type wireChunk struct {
	Candidates []struct {
		Content struct {
			Parts []wirePart `json:"parts"`
		} `json:"content"`
		FinishReason  string `json:"finishReason"`
		FinishMessage string `json:"finishMessage"`
	} `json:"candidates"`
	UsageMetadata  *wireUsage `json:"usageMetadata"`
	PromptFeedback *struct {
		BlockReason        string `json:"blockReason"`
		BlockReasonMessage string `json:"blockReasonMessage"`
	} `json:"promptFeedback"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
	} `json:"error"`
}

// decoder turns the chunks of one stream into providers.Events. Gemini has no end event: a
// candidate's finishReason is the end marker, and usageMetadata is cumulative on every chunk.
type decoder struct {
	em       *providers.Emitter
	idPrefix string // unique per stream, for synthesized tool call ids
	chunk    wireChunk
	calls    int
	usage    wireUsage
	hasUsage bool
	// usageRaw is the last usageMetadata seen by the fast path, parsed only when reported: a
	// copy in usageBuf, since an event's data is only valid until the next event.
	usageRaw, usageBuf []byte
	finish             string
	finished           bool

	// noFast turns the fast path off (tests compare both paths).
	noFast bool
	fast   fastChunk
}

// usageKey reads one usageMetadata field of the fast path.
func (d *decoder) usageKey(key, v []byte, kind byte) bool {
	n := tokenCount(0)
	if kind == jscan.KindNumber {
		n = tokenCount(parseCount(v))
	}
	u := &d.usage
	switch jscan.Canonical(key, "promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount", "thoughtsTokenCount") {
	case "promptTokenCount":
		u.PromptTokenCount = n
	case "candidatesTokenCount":
		u.CandidatesTokenCount = n
	case "cachedContentTokenCount":
		u.CachedContentTokenCount = n
	case "thoughtsTokenCount":
		u.ThoughtsTokenCount = n
	}
	return true
}

func (d *decoder) setFinish(reason string) {
	d.finish = reason
	d.finished = true
}

// chunk handles one data line; false means the stream is over for the caller.
func (d *decoder) data(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if !d.noFast {
		if handled, more := d.fastData(b); handled {
			return more
		}
	}
	d.chunk = wireChunk{}
	if err := json.Unmarshal(b, &d.chunk); err != nil {
		d.em.Fail(providers.ProtocolError(name, "invalid JSON in a stream chunk: "+err.Error()))
		return false
	}
	c := &d.chunk
	if c.UsageMetadata != nil {
		d.usage = *c.UsageMetadata
		d.usageRaw = nil
		d.hasUsage = true
	}
	if c.Error != nil {
		d.emitUsage()
		d.em.Fail(providers.ClassifyStreamError(name, c.Error.Status, c.Error.Message, c.Error.Code))
		return false
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" && len(c.Candidates) == 0 {
		d.emitUsage()
		detail := "prompt blocked: " + c.PromptFeedback.BlockReason
		if c.PromptFeedback.BlockReasonMessage != "" {
			detail += " (" + c.PromptFeedback.BlockReasonMessage + ")"
		}
		d.em.Fail(&providers.Error{Kind: providers.ErrContentFilter, Detail: detail,
			Message: "Gemini blocked the prompt (" + c.PromptFeedback.BlockReason + "); rephrase the request or remove the flagged content."})
		return false
	}
	// Only the first candidate is asked for (candidateCount defaults to 1).
	if len(c.Candidates) == 0 {
		return true
	}
	cand := &c.Candidates[0]
	for i := range cand.Content.Parts {
		if !d.part(&cand.Content.Parts[i]) {
			return false
		}
	}
	if cand.FinishReason != "" {
		d.setFinish(cand.FinishReason)
	}
	return true
}

func (d *decoder) part(p *wirePart) bool {
	switch {
	case p.FunctionCall != nil:
		fc := p.FunctionCall
		if fc.Name == "" {
			d.em.Fail(providers.ProtocolError(name, "functionCall without a name"))
			return false
		}
		args := fc.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage(`{}`)
		}
		id := fc.ID
		if id == "" {
			id = d.idPrefix + strconv.Itoa(d.calls)
		}
		i := d.calls
		d.calls++
		return d.em.Emit(providers.Event{Type: providers.EventToolCallStarted, Index: i, ToolCallID: id, ToolName: fc.Name}) &&
			d.em.Emit(providers.Event{Type: providers.EventToolCallArgsDelta, Index: i, ToolCallID: id, Text: string(args)}) &&
			d.em.Emit(providers.Event{Type: providers.EventToolCallCompleted, Index: i, ToolCallID: id, ToolName: fc.Name, Args: args, Signature: p.ThoughtSignature})
	case p.Text != nil:
		return d.textPart(*p.Text, true, p.Thought, p.ThoughtSignature)
	case p.ThoughtSignature != "":
		return d.textPart("", false, false, p.ThoughtSignature)
	}
	return true
}

// textPart handles a part that is not a function call: a thought, text, or a bare signature.
func (d *decoder) textPart(text string, hasText, thought bool, sig string) bool {
	switch {
	case hasText && thought:
		if text == "" && sig == "" {
			return true
		}
		return d.em.Emit(providers.Event{Type: providers.EventThinkingDelta, Text: text, Signature: sig})
	case hasText:
		// A signature on a plain text part (the end of a thinking turn) is kept as a thinking
		// event of its own so it can be sent back.
		if sig != "" && !d.em.Emit(providers.Event{Type: providers.EventThinkingDelta, Signature: sig}) {
			return false
		}
		if text == "" {
			return true
		}
		return d.em.Emit(providers.Event{Type: providers.EventTextDelta, Text: text})
	case sig != "":
		return d.em.Emit(providers.Event{Type: providers.EventThinkingDelta, Signature: sig})
	}
	return true
}

func (d *decoder) emitUsage() {
	if !d.hasUsage {
		return
	}
	if d.usageRaw != nil {
		d.usage = wireUsage{}
		_, _ = jscan.EachMember(d.usageRaw, d.usageKey)
		d.usageRaw = nil
	}
	u := &d.usage
	prompt, cached, cand, thoughts := int(u.PromptTokenCount), int(u.CachedContentTokenCount), int(u.CandidatesTokenCount), int(u.ThoughtsTokenCount)
	// promptTokenCount includes the cached tokens and candidatesTokenCount excludes the
	// thoughts; the neutral model counts input without cache reads and output with reasoning,
	// as OpenAI's completion_tokens does.
	d.em.Emit(providers.Event{Type: providers.EventUsage, Usage: providers.Usage{
		Input:     max(prompt-cached, 0),
		Output:    cand + thoughts,
		CacheRead: cached,
		Thinking:  thoughts,
	}})
}

// end is called at a clean EOF.
func (d *decoder) end() {
	if !d.finished {
		d.em.Fail(providers.Truncated(name))
		return
	}
	d.emitUsage()
	switch d.finish {
	case "STOP":
		if d.calls > 0 {
			d.em.Complete(providers.StopToolUse)
		} else {
			d.em.Complete(providers.StopEndTurn)
		}
	case "MAX_TOKENS":
		d.em.Complete(providers.StopMaxTokens)
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE":
		d.em.Complete(providers.StopRefusal)
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL":
		d.em.Notice("Gemini produced a malformed function call (" + d.finish + "); the turn ended without it.")
		d.em.Complete(providers.StopUnknown)
	default:
		if d.calls > 0 {
			d.em.Complete(providers.StopToolUse)
		} else {
			d.em.Complete(providers.StopUnknown)
		}
	}
}
