package gemini

import (
	"bytes"
	"errors"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/buger/jsonparser"
)

// The fast path handles the common chunk (one candidate whose parts are text or thoughts, usage,
// a finish reason) with jsonparser's allocation-free walks instead of encoding/json, so a delta
// costs no allocation but its text. Anything else (function calls, errors, blocked prompts,
// several candidates, a doubtful shape) goes to the general path, before anything was emitted.

// fastChunk is the fast path's scratch for one chunk.
type fastChunk struct {
	candidates, usage []byte
	parts             []byte
	bail              bool
	cands             int
	cand              []byte
	content, finish   []byte
	// the part being read
	text, sig []byte
	hasText   bool
	thought   bool
	more      bool
}

// fastCallbacks are the decoder's method values, made once per stream so the walks do not
// allocate closures per chunk.
type fastCallbacks struct {
	top, candKey, contentKey, partKey func(key, value []byte, t jsonparser.ValueType, off int) error
	cand, part, check                 func(value []byte, t jsonparser.ValueType, off int, err error)
}

var errStop = errors.New("stop")

func (d *decoder) topKey(key, v []byte, t jsonparser.ValueType, _ int) error {
	f := &d.fast
	switch canonical(key, "candidates", "usageMetadata", "error", "promptFeedback") {
	case "candidates":
		if t != jsonparser.Array {
			f.bail = true
			return errStop
		}
		f.candidates = v
	case "usageMetadata":
		if t != jsonparser.Object {
			f.bail = true
			return errStop
		}
		f.usage = v
	case "error", "promptFeedback":
		f.bail = true
		return errStop
	}
	return nil
}

func (d *decoder) candElem(v []byte, t jsonparser.ValueType, _ int, err error) {
	f := &d.fast
	if err != nil || t != jsonparser.Object {
		f.bail = true
		return
	}
	if f.cands == 0 {
		f.cand = v
	}
	f.cands++
}

func (d *decoder) candKey(key, v []byte, t jsonparser.ValueType, _ int) error {
	f := &d.fast
	switch canonical(key, "content", "finishReason") {
	case "content":
		if t != jsonparser.Object {
			f.bail = true
			return errStop
		}
		f.content = v
	case "finishReason":
		if t != jsonparser.String || bytes.IndexByte(v, '\\') >= 0 {
			f.bail = true
			return errStop
		}
		f.finish = v
	}
	return nil
}

func (d *decoder) partKey(key, v []byte, t jsonparser.ValueType, _ int) error {
	f := &d.fast
	switch canonical(key, "text", "thought", "thoughtSignature", "functionCall") {
	case "functionCall":
		return errStop
	case "text":
		if t != jsonparser.String {
			return errStop
		}
		f.text, f.hasText = v, true
	case "thought":
		if t != jsonparser.Boolean {
			return errStop
		}
		f.thought = string(v) == "true"
	case "thoughtSignature":
		if t != jsonparser.String {
			return errStop
		}
		f.sig = v
	}
	return nil
}

func (d *decoder) contentKey(key, v []byte, t jsonparser.ValueType, _ int) error {
	if canonical(key, "parts") == "" {
		return nil
	}
	if t == jsonparser.Null {
		d.fast.parts = nil
		return nil
	}
	if t != jsonparser.Array {
		d.fast.bail = true
		return errStop
	}
	d.fast.parts = v
	return nil
}

// checkElem vets one element of parts before any is emitted.
func (d *decoder) checkElem(v []byte, t jsonparser.ValueType, _ int, err error) {
	f := &d.fast
	f.text, f.sig = nil, nil
	if err != nil || t != jsonparser.Object || jsonparser.ObjectEach(v, d.cb.partKey) != nil ||
		!unescapes(f.text) || !unescapes(f.sig) {
		f.bail = true
	}
}

// unescapes reports whether jsonparser can undo the escapes of a raw string (it refuses lone
// surrogates, which encoding/json turns into U+FFFD); short strings cost no allocation.
func unescapes(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return true
	}
	var buf [512]byte
	_, err := jsonparser.Unescape(raw, buf[:])
	return err == nil
}

// partElem handles one element of parts.
func (d *decoder) partElem(v []byte, t jsonparser.ValueType, _ int, err error) {
	f := &d.fast
	if !f.more {
		return
	}
	f.text, f.sig, f.hasText, f.thought = nil, nil, false, false
	if err != nil || t != jsonparser.Object || jsonparser.ObjectEach(v, d.cb.partKey) != nil {
		d.em.Fail(providers.ProtocolError(name, "a part the stream could not read"))
		f.more = false
		return
	}
	text := ""
	if f.hasText {
		var perr error
		if text, perr = jsonparser.ParseString(f.text); perr != nil {
			d.em.Fail(providers.ProtocolError(name, "a text part the stream could not read"))
			f.more = false
			return
		}
		text = httpsse.FixUTF8(text)
	}
	sig := ""
	if f.sig != nil {
		var perr error
		if sig, perr = jsonparser.ParseString(f.sig); perr != nil {
			d.em.Fail(providers.ProtocolError(name, "a thoughtSignature the stream could not read"))
			f.more = false
			return
		}
		sig = httpsse.FixUTF8(sig)
	}
	f.more = d.textPart(text, f.hasText, f.thought, sig)
}

// fastData handles a chunk whose shape the fast path knows; handled is false otherwise, before
// anything was emitted.
func (d *decoder) fastData(b []byte) (handled, more bool) {
	if d.cb == nil {
		d.cb = &fastCallbacks{top: d.topKey, candKey: d.candKey, contentKey: d.contentKey, partKey: d.partKey,
			cand: d.candElem, part: d.partElem, check: d.checkElem}
	}
	d.fast = fastChunk{}
	f := &d.fast
	if !framed(b) {
		return false, false
	}
	if err := jsonparser.ObjectEach(b, d.cb.top); err != nil || f.bail {
		return false, false
	}
	var parts []byte
	if f.candidates != nil {
		if _, err := jsonparser.ArrayEach(f.candidates, d.cb.cand); err != nil || f.bail || f.cands != 1 {
			return false, false
		}
		if err := jsonparser.ObjectEach(f.cand, d.cb.candKey); err != nil || f.bail {
			return false, false
		}
		if f.content != nil {
			if jsonparser.ObjectEach(f.content, d.cb.contentKey) != nil || f.bail {
				return false, false
			}
			parts = f.parts
		}
		// Function calls take the general path; so does any part key that is not a plain
		// string or boolean we know, decided before a part is emitted.
		if parts != nil {
			if _, err := jsonparser.ArrayEach(parts, d.cb.check); err != nil || f.bail {
				return false, false
			}
		}
	}
	if f.usage != nil {
		d.usageRaw = f.usage
		d.hasUsage = true
	}
	if parts != nil {
		f.more = true
		if _, err := jsonparser.ArrayEach(parts, d.cb.part); err != nil && f.more {
			d.em.Fail(providers.ProtocolError(name, "parts the stream could not read"))
			return true, false
		}
		if !f.more {
			return true, false
		}
	}
	if len(f.finish) > 0 {
		d.setFinish(string(f.finish))
	}
	return true, true
}

// canonical returns the name in names that key equals, exactly or case-insensitively (the way
// encoding/json matches struct fields, so both decoding paths read the same keys), or "".
func canonical(key []byte, names ...string) string {
	for _, n := range names {
		if string(key) == n {
			return n
		}
	}
	for _, n := range names {
		if bytes.EqualFold(key, httpsse.Bytes(n)) {
			return n
		}
	}
	return ""
}
