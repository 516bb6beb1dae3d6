// Package texttools is the text tool-call protocol for models that have no native tool calling
// (or a server that refuses the tools declaration): the streaming Extractor that separates the
// prose a model writes from its <tool_call> envelopes, the tolerant parser of those envelopes,
// the adapter that turns a provider's text stream into the neutral tool-call events the agent loop
// already runs, and the rendering of a neutral history back into text for such a model.
//
// What counts as an envelope, decided once here:
//
//   - `<tool_call>` … `</tool_call>` emitted as a call: the opening tag starts a line (at most
//     three spaces before it), tag names case-insensitive, with optional blanks or attributes
//     before the `>`. An envelope the model only quotes is prose, shown and never run: one inside
//     a Markdown code fence, in a blockquote (`> <tool_call>`), in inline code or quotes, or after
//     other text on its line. A model that echoes a README full of example calls (in auto mode,
//     on a cloned repository) must not run them; small models that fence their real calls are
//     told so by the loop and write them again unfenced.
//   - The first `</tool_call>` ends the envelope, even inside a JSON string.
//   - `<tool_response>` is never the model's to write: a model imitating one is cut there. Nothing
//     after it is shown or kept; calls written before it still run.
//   - Text that might still become a tag (`<tool_c` at the end of a delta) is held back until the
//     next delta decides it; at the end of the stream a held fragment is prose after all.
package texttools

import (
	"strings"
)

// Call is one envelope the model wrote. Err, when set, says why it could not be parsed; Name may
// still be set then (the name was readable, the arguments were not).
type Call struct {
	Name string
	// Args is the arguments as one JSON object ("{}" when the model gave none).
	Args []byte
	// Raw is the envelope's body as the model wrote it.
	Raw string
	Err string
}

// Piece is one thing the extractor found: prose to show, or a call.
type Piece struct {
	Prose string
	Call  *Call
}

// state is where the extractor is in the text.
type state uint8

const (
	stProse   state = iota // outside any envelope
	stFence                // at a possible fence opener, reading its info string
	stInFence              // inside a code fence: prose up to the closing fence
	stCall                 // inside an envelope
	stEnvEnd               // right after an envelope, dropping the line break that ends it
	stCut                  // after an imitated <tool_response>: everything is dropped
)

// maxEnvelope bounds one envelope's body; a longer one is a failed call, not unbounded memory.
const maxEnvelope = 1 << 20

const tooLong = "the tool call is longer than 1 MiB; send smaller calls"

// Extractor splits streamed text into prose and calls. Feed it every text delta in order, then
// Flush once at the end. The zero value is ready to use.
type Extractor struct {
	st state
	// held is text not yet decided: a possible tag or fence, or an envelope's body.
	held strings.Builder
	// notLineStart says the last byte given out (or dropped) did not end a line, so a ``` here
	// opens no fence.
	notLineStart bool
	// lineDirty says the current line already holds text other than up to three spaces
	// (indent counts them), so a <tool_call> here is quoted, not emitted as a call.
	lineDirty bool
	indent    int
	// oversize is set while an envelope longer than maxEnvelope is being skipped; head is its
	// start, for the error.
	oversize bool
	head     string
	// scanned is how far into an envelope's body the closing tag was already looked for.
	scanned int
}

// Cut reports whether the model imitated a <tool_response>: the caller should stop reading.
func (x *Extractor) Cut() bool { return x.st == stCut }

// Feed takes the next delta and appends what it completes to dst.
func (x *Extractor) Feed(delta string, dst []Piece) []Piece {
	if x.st == stCut || delta == "" {
		return dst
	}
	// The fast path: nothing held and nothing that could start a tag or a fence.
	if x.st == stProse && x.held.Len() == 0 && strings.IndexByte(delta, '<') < 0 && strings.IndexByte(delta, '`') < 0 {
		x.track(delta)
		return append(dst, Piece{Prose: delta})
	}
	if x.st == stCall && x.held.Len() > 0 {
		// Inside an envelope only the closing tag matters: the body grows in place until it
		// comes, instead of being copied for every delta.
		x.held.WriteString(delta)
		s := x.held.String()
		if j, _ := x.closing(s); j < 0 && len(s) <= maxEnvelope {
			return dst
		}
		x.held = strings.Builder{} // s keeps the old buffer
		return x.run(s, false, dst)
	}
	var s string
	if x.held.Len() == 0 {
		s = delta
	} else {
		x.held.WriteString(delta)
		s = x.held.String()
		x.held.Reset()
	}
	return x.run(s, false, dst)
}

// Flush ends the text: what was held back as a possible tag is prose after all, and an envelope
// left open is parsed as far as it got (a model stopped by a stop sequence at `</tool_call>`
// still made its call).
func (x *Extractor) Flush(dst []Piece) []Piece {
	if x.st == stCut {
		return dst
	}
	s := x.held.String()
	x.held.Reset()
	return x.run(s, true, dst)
}

// prose appends text to show.
func (x *Extractor) prose(s string, dst []Piece) []Piece {
	if s == "" {
		return dst
	}
	x.track(s)
	if n := len(dst); n > 0 && dst[n-1].Call == nil {
		dst[n-1].Prose += s
		return dst
	}
	return append(dst, Piece{Prose: s})
}

// track notes where prose s leaves the line: at its start or not (a fence opener), and whether
// anything but up to three spaces is on it (a quoted envelope).
func (x *Extractor) track(s string) {
	x.notLineStart = s[len(s)-1] != '\n'
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		x.lineDirty, x.indent = false, 0
		s = s[i+1:]
	}
	for j := 0; j < len(s) && !x.lineDirty; j++ {
		if s[j] == ' ' && x.indent < 3 {
			x.indent++
		} else {
			x.lineDirty = true
		}
	}
}

// hold keeps s for the next delta.
func (x *Extractor) hold(s string) { x.held.WriteString(s) }

// run consumes s from the current state; at the end (final) nothing may be held.
func (x *Extractor) run(s string, final bool, dst []Piece) []Piece {
	for {
		switch x.st {
		case stCut:
			return dst
		case stProse:
			i := strings.IndexAny(s, "<`")
			if i < 0 {
				return x.prose(s, dst)
			}
			dst = x.prose(s[:i], dst)
			s = s[i:]
			if s[0] == '<' {
				n, partial := matchTag(s, "tool_call")
				if n > 0 && x.lineDirty {
					// Quoted (inline code, a blockquote, quotes, a sentence): prose.
					dst = x.prose(s[:n], dst)
					s = s[n:]
					continue
				}
				if n > 0 {
					x.st, x.scanned = stCall, 0
					s = s[n:]
					continue
				}
				rn, rpartial := matchTag(s, "tool_response")
				if rn > 0 {
					x.st = stCut
					return dst
				}
				if (partial || rpartial) && !final {
					x.hold(s)
					return dst
				}
				dst = x.prose("<", dst)
				s = s[1:]
				continue
			}
			// A backtick: a fence opener only at the start of a line.
			if x.notLineStart {
				dst = x.prose("`", dst)
				s = s[1:]
				continue
			}
			if len(s) < 3 {
				if !final && strings.Trim(s, "`") == "" {
					x.hold(s)
					return dst
				}
				dst = x.prose(s, dst)
				return dst
			}
			if !strings.HasPrefix(s, "```") {
				dst = x.prose(s[:1], dst)
				s = s[1:]
				continue
			}
			x.st = stFence
			// Fall through to stFence with the opener still in s.
		case stFence:
			// s starts with ```: read the opener's line (its info string), then blank space,
			// then decide whether an envelope comes next.
			nl := strings.IndexByte(s, '\n')
			info := ""
			if nl >= 0 {
				info = strings.TrimSpace(s[3:nl])
			}
			if nl < 0 && !final && len(s) <= 64 {
				x.hold(s)
				return dst
			}
			if nl < 0 || len(info) > 32 || strings.ContainsAny(info, "`<") {
				// No fence opener after all: the backticks are prose, the rest is read again.
				x.st = stProse
				dst = x.prose(s[:3], dst)
				s = s[3:]
				continue
			}
			// A fence: what it holds is shown, never run (an example call in a README the
			// model echoes included).
			x.st = stInFence
			dst = x.prose(s[:nl+1], dst)
			s = s[nl+1:]
		case stInFence:
			// Prose up to and including the closing fence: ``` at the start of a line, after at
			// most three spaces. A line start that may still become one is held.
			pos, lineStart := 0, !x.notLineStart
			closed := false
			for pos < len(s) {
				if lineStart {
					k := pos
					for k < len(s) && k < pos+3 && s[k] == ' ' {
						k++
					}
					rest := s[k:]
					if strings.HasPrefix(rest, "```") {
						dst = x.prose(s[:k+3], dst)
						s = s[k+3:]
						x.st, closed = stProse, true
						break
					}
					if !final && len(rest) < 3 && strings.Trim(rest, "` ") == "" {
						dst = x.prose(s[:pos], dst)
						x.hold(s[pos:])
						return dst
					}
				}
				nl := strings.IndexByte(s[pos:], '\n')
				if nl < 0 {
					break
				}
				pos += nl + 1
				lineStart = true
			}
			if !closed {
				return x.prose(s, dst)
			}
		case stCall:
			j, n := x.closing(s)
			if j < 0 {
				if len(s) > maxEnvelope {
					// Keep the head for the error and the tail where the closing tag may
					// start; drop the middle.
					if !x.oversize {
						x.oversize = true
						x.head = clipRaw(s)
					}
					tail := s[len(s)-32:]
					x.scanned -= len(s) - len(tail)
					if x.scanned < 0 {
						x.scanned = 0
					}
					s = tail
				}
				if final {
					if x.oversize {
						x.st, x.oversize = stProse, false
						return append(dst, Piece{Call: &Call{Raw: x.head, Err: tooLong}})
					}
					body := s
					x.st = stProse
					if strings.TrimSpace(body) == "" {
						return dst
					}
					calls := Parse(body)
					for i := range calls {
						if calls[i].Err != "" {
							calls[i].Err = "the <tool_call> envelope was not closed with </tool_call>, and " + calls[i].Err
						}
					}
					return appendCalls(dst, calls)
				}
				x.hold(s)
				return dst
			}
			body := s[:j]
			s = s[j+n:]
			x.scanned = 0
			cut := false
			if n == 0 {
				// A <tool_response> inside the envelope: run what was written, then cut.
				cut = true
			}
			switch {
			case x.oversize:
				x.oversize = false
				dst = append(dst, Piece{Call: &Call{Raw: x.head, Err: tooLong}})
			case strings.TrimSpace(body) != "" || !cut:
				dst = appendCalls(dst, Parse(body))
			}
			if cut {
				x.st = stCut
				return dst
			}
			// Text right after a call is on the call's line, but a second envelope there is
			// emitted as a call too.
			x.notLineStart, x.lineDirty, x.indent = true, false, 0
			x.st = stEnvEnd
		case stEnvEnd:
			// The line break right after an envelope belongs to it.
			switch {
			case s == "":
				if final {
					x.st = stProse
				}
				return dst
			case s == "\r" && !final:
				x.hold(s)
				return dst
			case strings.HasPrefix(s, "\r\n"):
				s = s[2:]
				x.notLineStart = false
			case s[0] == '\n':
				s = s[1:]
				x.notLineStart = false
			}
			x.st = stProse
		}
	}
}

// closing finds the end of the envelope body in s: the index of `</tool_call>` and its length,
// or the index of an imitated `<tool_response>` with length 0; -1 when neither is there yet.
func (x *Extractor) closing(s string) (int, int) {
	from := x.scanned
	for {
		i := strings.IndexByte(s[from:], '<')
		if i < 0 {
			// Everything up to here is body; a closing tag cannot start before the end.
			x.scanned = len(s)
			return -1, 0
		}
		i += from
		t := s[i:]
		if n, partial := matchTag(t, "/tool_call"); n > 0 {
			return i, n
		} else if partial {
			x.scanned = i
			return -1, 0
		}
		if n, partial := matchTag(t, "tool_response"); n > 0 {
			return i, 0
		} else if partial {
			x.scanned = i
			return -1, 0
		}
		from = i + 1
	}
}

// matchTag reports whether s starts with the tag <name> (name case-insensitive; blanks or
// attributes allowed before the '>' on the same line): its length, or, when s ends before it
// could be decided, partial.
func matchTag(s, name string) (n int, partial bool) {
	if len(s) == 0 || s[0] != '<' {
		return 0, false
	}
	i := 1
	for j := 0; j < len(name); j++ {
		if i >= len(s) {
			return 0, true
		}
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[j] {
			return 0, false
		}
		i++
	}
	if i >= len(s) {
		return 0, true
	}
	switch s[i] {
	case '>':
		return i + 1, false
	case ' ', '\t':
		// Blanks, or attributes (<tool_response name="x">), up to the '>' on the same line.
		for j := i; j < len(s) && j < i+maxAttrs; j++ {
			switch s[j] {
			case '>':
				return j + 1, false
			case '<', '\n':
				return 0, false
			}
		}
		if len(s) < i+maxAttrs {
			return 0, true
		}
	}
	return 0, false
}

// maxAttrs bounds what may sit between a tag's name and its '>'.
const maxAttrs = 256

func appendCalls(dst []Piece, calls []Call) []Piece {
	for i := range calls {
		dst = append(dst, Piece{Call: &calls[i]})
	}
	return dst
}

func clipRaw(s string) string {
	if len(s) > 200 {
		s = s[:200]
		for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
			s = s[:len(s)-1]
		}
		return s + "…"
	}
	return s
}
