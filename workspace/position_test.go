package workspace

import (
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

func TestPositionEncodings(t *testing.T) {
	// "a😀b" : 😀 is 4 bytes, 2 UTF-16 units, 1 code point.
	// "漢字" : 3 bytes each, 1 unit each in UTF-16 and UTF-32.
	// "e\u0301" : e + combining acute: two code points, no special casing in LSP.
	text := "a😀b\r\n漢字x\ne\u0301z\rlast"
	cases := []struct {
		name         string
		offset       int
		u8, u16, u32 Position
	}{
		{"start", 0, Position{0, 0}, Position{0, 0}, Position{0, 0}},
		{"before emoji", 1, Position{0, 1}, Position{0, 1}, Position{0, 1}},
		{"after emoji", 5, Position{0, 5}, Position{0, 3}, Position{0, 2}},
		{"before CRLF", 6, Position{0, 6}, Position{0, 4}, Position{0, 3}},
		{"line 1 start", 8, Position{1, 0}, Position{1, 0}, Position{1, 0}},
		{"after first CJK", 11, Position{1, 3}, Position{1, 1}, Position{1, 1}},
		{"after CJK", 14, Position{1, 6}, Position{1, 2}, Position{1, 2}},
		{"line 2 start", 16, Position{2, 0}, Position{2, 0}, Position{2, 0}},
		{"after combining mark", 19, Position{2, 3}, Position{2, 2}, Position{2, 2}},
		{"line 3 after lone CR", 21, Position{3, 0}, Position{3, 0}, Position{3, 0}},
		{"end", len(text), Position{3, 4}, Position{3, 4}, Position{3, 4}},
	}
	x := NewLineIndex(text)
	if x.Lines() != 4 {
		t.Fatalf("Lines = %d, want 4", x.Lines())
	}
	for _, c := range cases {
		for _, e := range []struct {
			enc  PositionEncoding
			want Position
		}{{UTF8, c.u8}, {UTF16, c.u16}, {UTF32, c.u32}} {
			got, err := x.Position(c.offset, e.enc)
			if err != nil || got != e.want {
				t.Errorf("%s: Position(%d, %s) = %v, %v; want %v", c.name, c.offset, e.enc, got, err, e.want)
				continue
			}
			back, err := x.Offset(got, e.enc)
			if err != nil || back != c.offset {
				t.Errorf("%s: Offset(%v, %s) = %d, %v; want %d", c.name, got, e.enc, back, err, c.offset)
			}
		}
	}
}

func TestPositionRefusals(t *testing.T) {
	text := "a😀\r\nb"
	x := NewLineIndex(text)
	for _, off := range []int{2, 3, 4} { // inside the emoji
		if p, err := x.Position(off, UTF16); err == nil {
			t.Errorf("Position(%d) inside a UTF-8 sequence = %v, want an error", off, p)
		}
	}
	if p, err := x.Position(6, UTF16); err == nil { // between \r and \n
		t.Errorf("Position inside CRLF = %v, want an error", p)
	}
	if _, err := x.Position(-1, UTF16); err == nil {
		t.Error("negative offset accepted")
	}
	if _, err := x.Position(len(text)+1, UTF16); err == nil {
		t.Error("offset past the end accepted")
	}
	if o, err := x.Offset(Position{0, 2}, UTF16); err == nil {
		t.Errorf("Offset inside a surrogate pair = %d, want an error", o)
	}
	if o, err := x.Offset(Position{0, 3}, UTF8); err == nil {
		t.Errorf("Offset inside a UTF-8 sequence = %d, want an error", o)
	}
	if _, err := x.Offset(Position{2, 0}, UTF16); err == nil {
		t.Error("line past the end accepted")
	}
	// A character past the end of its line clamps to the line end, before the CRLF.
	if o, err := x.Offset(Position{0, 99}, UTF16); err != nil || o != 5 {
		t.Errorf("Offset past the line end = %d, %v; want 5", o, err)
	}
}

func TestPositionInvalidUTF8(t *testing.T) {
	// Each invalid byte counts as one unit in every encoding.
	text := "a\xff\xfeb\xe2\x82c" // \xe2\x82 is a truncated 3-byte sequence: two units
	x := NewLineIndex(text)
	for _, enc := range []PositionEncoding{UTF8, UTF16, UTF32} {
		for off := 0; off <= len(text); off++ {
			p, err := x.Position(off, enc)
			if err != nil {
				t.Fatalf("%s: Position(%d): %v", enc, off, err)
			}
			if p.Character != off {
				t.Errorf("%s: Position(%d) = %v, want character %d", enc, off, p, off)
			}
			if back, err := x.Offset(p, enc); err != nil || back != off {
				t.Errorf("%s: Offset(%v) = %d, %v", enc, p, back, err)
			}
		}
	}
}

func TestNegotiateEncoding(t *testing.T) {
	for _, c := range []struct {
		offered []string
		want    PositionEncoding
	}{
		{nil, UTF16},
		{[]string{"utf-16"}, UTF16},
		{[]string{"utf-16", "utf-8"}, UTF8},
		{[]string{"utf-32", "utf-16"}, UTF32},
		{[]string{"utf-32", "utf-8"}, UTF32}, // the client's order of preference wins
		{[]string{"latin-1"}, UTF16},
	} {
		if got := NegotiateEncoding(c.offered); got != c.want {
			t.Errorf("NegotiateEncoding(%v) = %s, want %s", c.offered, got, c.want)
		}
	}
}

// refPosition is an independent model: split lines by hand, count units with the standard
// library's own encoders.
func refPosition(text string, offset int, enc PositionEncoding) Position {
	line, lineStart := 0, 0
	for i := 0; i < offset; i++ {
		if text[i] == '\n' || (text[i] == '\r' && (i+1 >= len(text) || text[i+1] != '\n')) {
			line++
			lineStart = i + 1
		}
	}
	seg := text[lineStart:offset]
	switch enc {
	case UTF8:
		return Position{line, len(seg)}
	case UTF32:
		return Position{line, utf8.RuneCountInString(seg)}
	}
	return Position{line, len(utf16.Encode([]rune(seg)))}
}

func FuzzPosition(f *testing.F) {
	for _, s := range []string{"", "a\r\nb", "😀\n漢\re\u0301", "\xff\r\r\n\n", strings.Repeat("x😀\r\n", 3)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		x := NewLineIndex(text)
		for off := 0; off <= len(text); off++ {
			for _, enc := range []PositionEncoding{UTF8, UTF16, UTF32} {
				p, err := x.Position(off, enc)
				if !boundary(text, off) {
					if err == nil && utf8.ValidString(text) {
						t.Fatalf("Position(%q, %d, %s) = %v, want an error", text, off, enc, p)
					}
					continue
				}
				if err != nil {
					// Boundaries inside invalid sequences are allowed to be refused only when
					// they are not rune starts; boundary() already said this one is.
					t.Fatalf("Position(%q, %d, %s): %v", text, off, enc, err)
				}
				if utf8.ValidString(text) {
					if want := refPosition(text, off, enc); p != want {
						t.Fatalf("Position(%q, %d, %s) = %v, want %v", text, off, enc, p, want)
					}
				}
				if back, err := x.Offset(p, enc); err != nil || back != off {
					t.Fatalf("Offset(%q, %v, %s) = %d, %v; want %d", text, p, enc, back, err, off)
				}
			}
		}
	})
}
