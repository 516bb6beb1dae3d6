package workspace

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// PositionEncoding is an LSP position encoding kind: the unit a Position's Character counts.
type PositionEncoding string

const (
	UTF8  PositionEncoding = "utf-8"
	UTF16 PositionEncoding = "utf-16" // the LSP default, and all VS Code speaks
	UTF32 PositionEncoding = "utf-32"
)

// NegotiateEncoding picks the encoding agentd uses with a client that offered these
// (general.positionEncodings, in the client's order of preference): the first utf-8 or utf-32 it
// offers (no UTF-16 arithmetic), else utf-16, which every client must support. It takes any string
// kind, so rpc passes go.lsp.dev/protocol's PositionEncodingKind list as it decoded it.
func NegotiateEncoding[S ~string](offered []S) PositionEncoding {
	for _, o := range offered {
		if e := PositionEncoding(o); e == UTF8 || e == UTF32 {
			return e
		}
	}
	return UTF16
}

// Position is an LSP position: a 0-based line and a 0-based count of encoding units within it.
type Position struct {
	Line, Character int
}

// LineIndex maps byte offsets of one text to LSP positions and back. Lines end at "\n", "\r\n"
// or "\r", as LSP defines them. Bytes that are not valid UTF-8 count as one unit each, in every
// encoding (each is one U+FFFD to a decoder that replaces, and one byte to one that does not).
type LineIndex struct {
	text   string
	starts []int // byte offset where each line begins; starts[0] == 0
}

// NewLineIndex indexes text.
func NewLineIndex(text string) *LineIndex {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &LineIndex{text: text, starts: starts}
}

// Lines is the number of lines (a text ending in a line break has an empty last line).
func (x *LineIndex) Lines() int { return len(x.starts) }

// lineEnd is the offset of the first byte of line i's terminator (or the end of the text).
func (x *LineIndex) lineEnd(i int) int {
	if i+1 >= len(x.starts) {
		return len(x.text)
	}
	end := x.starts[i+1]
	if end >= 2 && x.text[end-2] == '\r' && x.text[end-1] == '\n' {
		return end - 2
	}
	return end - 1
}

// Position converts a byte offset into a position in enc. The offset must lie on a character
// boundary and not between the "\r" and "\n" of a CRLF; the end of the text is valid.
func (x *LineIndex) Position(offset int, enc PositionEncoding) (Position, error) {
	if offset < 0 || offset > len(x.text) {
		return Position{}, fmt.Errorf("offset %d is outside the text (length %d)", offset, len(x.text))
	}
	line := sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > offset }) - 1
	start, end := x.starts[line], x.lineEnd(line)
	if offset > end {
		// Inside the terminator: only the position of "\r" itself (== end) is representable.
		return Position{}, fmt.Errorf("offset %d splits the line break of line %d", offset, line)
	}
	n := 0
	for i := start; i < offset; {
		r, size := utf8.DecodeRuneInString(x.text[i:])
		if i+size > offset {
			return Position{}, fmt.Errorf("offset %d is inside a UTF-8 sequence", offset)
		}
		n += units(r, size, enc)
		i += size
	}
	return Position{Line: line, Character: n}, nil
}

// Offset converts a position in enc into a byte offset. A character past the end of its line
// means the end of the line, as LSP specifies; a line past the last one is an error, and so is a
// character that falls inside a UTF-8 sequence or a UTF-16 surrogate pair.
func (x *LineIndex) Offset(p Position, enc PositionEncoding) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("negative position %d:%d", p.Line, p.Character)
	}
	if p.Line >= len(x.starts) {
		return 0, fmt.Errorf("line %d is past the last line (%d)", p.Line, len(x.starts)-1)
	}
	i, end := x.starts[p.Line], x.lineEnd(p.Line)
	n := 0
	for i < end && n < p.Character {
		r, size := utf8.DecodeRuneInString(x.text[i:end])
		n += units(r, size, enc)
		i += size
	}
	if n > p.Character {
		return 0, fmt.Errorf("position %d:%d is inside a character", p.Line, p.Character)
	}
	return i, nil
}

// units is how many code units of enc one decoded rune occupies.
func units(r rune, size int, enc PositionEncoding) int {
	switch enc {
	case UTF8:
		return size
	case UTF32:
		return 1
	default:
		if r == utf8.RuneError && size == 1 {
			return 1
		}
		if r >= 0x10000 {
			return 2
		}
		return 1
	}
}
