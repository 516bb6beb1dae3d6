package gemini

import (
	"bytes"

	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

// The fast path handles the common chunk (one candidate whose parts are text or thoughts, usage,
// a finish reason) in one walk of jscan instead of encoding/json, so a delta costs no allocation
// but its text. Anything else (function calls, errors, blocked prompts, several candidates, a
// repeated key, a value of an unexpected type) goes to the general path, decided before anything
// is emitted: the walk only records, and emission follows a complete, successful walk.

// fastChunk is the fast path's scratch for one chunk.
type fastChunk struct {
	usage  []byte
	finish []byte
	cands  int
	seen   uint16 // keys met at the current chunk's levels, to refuse repeats
	list   [8]partInfo
	n      int
	buf    []byte // unquote scratch, kept across chunks
}

type partInfo struct {
	text, sig []byte // raw JSON strings, quotes included
	thought   bool
}

const (
	seenCandidates uint16 = 1 << iota
	seenUsage
	seenContent
	seenFinish
	seenParts
)

// once marks bit as seen and reports false if it already was.
func (f *fastChunk) once(bit uint16) bool {
	if f.seen&bit != 0 {
		return false
	}
	f.seen |= bit
	return true
}

// fastData handles a chunk whose shape the fast path knows; handled is false otherwise, before
// anything was emitted.
func (d *decoder) fastData(b []byte) (handled, more bool) {
	f := &d.fast
	f.usage, f.finish, f.cands, f.seen, f.n = nil, nil, 0, 0, 0
	end := jscan.Members(b, 0, func(key []byte, vi int) int {
		switch jscan.Canonical(key, "candidates", "usageMetadata", "error", "promptFeedback") {
		case "candidates":
			if !f.once(seenCandidates) {
				return -1
			}
			return d.fastCandidates(b, vi)
		case "usageMetadata":
			ve, kind := jscan.ValueEnd(b, vi)
			if ve < 0 || kind != jscan.KindObject || !f.once(seenUsage) {
				return -1
			}
			f.usage = b[vi:ve]
			return ve
		case "error", "promptFeedback":
			return -1
		}
		ve, _ := jscan.ValueEnd(b, vi)
		return ve
	})
	if end < 0 || jscan.SkipWS(b, end) != len(b) {
		return false, false
	}
	if f.usage != nil {
		// A copy: the event's data is only valid until the next event.
		d.usageBuf = append(d.usageBuf[:0], f.usage...)
		d.usageRaw = d.usageBuf
		d.hasUsage = true
	}
	for i := 0; i < f.n; i++ {
		if !d.emitPart(&f.list[i]) {
			return true, false
		}
	}
	if len(f.finish) > 2 {
		d.setFinish(string(f.finish[1 : len(f.finish)-1]))
	}
	return true, true
}

func (d *decoder) fastCandidates(b []byte, i int) int {
	f := &d.fast
	return jscan.Elements(b, i, func(vi int) int {
		f.cands++
		if f.cands > 1 {
			return -1 // several candidates: the general path reads the first
		}
		return jscan.Members(b, vi, func(key []byte, vi int) int {
			switch jscan.Canonical(key, "content", "finishReason", "finishMessage") {
			case "content":
				if !f.once(seenContent) {
					return -1
				}
				return jscan.Members(b, vi, func(key []byte, vi int) int {
					if jscan.Canonical(key, "parts") == "" {
						ve, _ := jscan.ValueEnd(b, vi)
						return ve
					}
					if !f.once(seenParts) {
						return -1
					}
					return jscan.Elements(b, vi, func(vi int) int { return d.fastPart(b, vi) })
				})
			case "finishReason":
				ve, kind := jscan.ValueEnd(b, vi)
				if ve < 0 || kind != jscan.KindString || !f.once(seenFinish) || bytes.IndexByte(b[vi:ve], '\\') >= 0 {
					return -1
				}
				f.finish = b[vi:ve]
				return ve
			case "finishMessage":
				// Only its type matters: the general path would refuse a chunk with a bad one.
				ve, kind := jscan.ValueEnd(b, vi)
				if kind != jscan.KindString {
					return -1
				}
				return ve
			}
			ve, _ := jscan.ValueEnd(b, vi)
			return ve
		})
	})
}

// fastPart records one element of parts; a function call, a repeated key or an odd type sends
// the chunk to the general path.
func (d *decoder) fastPart(b []byte, i int) int {
	f := &d.fast
	if f.n == len(f.list) {
		return -1
	}
	p := &f.list[f.n]
	*p = partInfo{}
	var seen uint8
	end := jscan.Members(b, i, func(key []byte, vi int) int {
		ve, kind := jscan.ValueEnd(b, vi)
		if ve < 0 {
			return -1
		}
		var bit uint8
		switch jscan.Canonical(key, "text", "thought", "thoughtSignature", "functionCall") {
		case "text":
			if kind != jscan.KindString {
				return -1
			}
			bit, p.text = 1, b[vi:ve]
		case "thought":
			if kind != jscan.KindTrue && kind != jscan.KindFalse {
				return -1
			}
			bit, p.thought = 2, kind == jscan.KindTrue
		case "thoughtSignature":
			if kind != jscan.KindString {
				return -1
			}
			bit, p.sig = 4, b[vi:ve]
		case "functionCall":
			return -1
		default:
			return ve
		}
		if seen&bit != 0 {
			return -1
		}
		seen |= bit
		return ve
	})
	if end >= 0 {
		f.n++
	}
	return end
}

// emitPart emits one recorded part.
func (d *decoder) emitPart(p *partInfo) bool {
	text, sig := "", ""
	ok := true
	if p.text != nil {
		text, ok = jscan.Unquote(p.text, &d.fast.buf)
		text = httpsse.FixUTF8(text)
	}
	if ok && p.sig != nil {
		sig, ok = jscan.Unquote(p.sig, &d.fast.buf)
		sig = httpsse.FixUTF8(sig)
	}
	if !ok {
		d.em.Fail(providers.ProtocolError(name, "a part the stream could not read"))
		return false
	}
	return d.textPart(text, p.text != nil, p.thought, sig)
}
