package term

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Everything the model or a server wrote (titles, commands, paths, diffs, tool output, error
// messages) passes through safeLine or safeText before it reaches the terminal. A terminal acts
// on some characters instead of showing them: ESC starts sequences that hide text, move the
// cursor or retitle the window; C1 controls do the same on terminals that honour them; bidi
// controls reorder what is shown; a newline fakes a line the user takes for agentd's own. Those
// are written as visible escapes (\x1b, \u202e, \n), so what the user reads is what will run.

// Escape makes text safe to print on one line of a terminal, for callers outside the package.
func Escape(s string) string { return safeLine(s) }

// safeLine escapes s for one line of output: every control, newline and tab included.
func safeLine(s string) string { return escape(s, false) }

// safeText escapes s for output that may span lines: newlines and tabs are kept.
func safeText(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size, multiline) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !needsEscape(r, size, multiline) {
			b.WriteString(s[i : i+size])
		} else {
			writeEscape(&b, s[i], r, size)
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether a terminal could act on the rune r (size bytes; RuneError of size
// 1 is a byte that is not UTF-8, which an 8-bit terminal may read as a C1 control).
func needsEscape(r rune, size int, multiline bool) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f: // C1
		return true
	case r == '\u2028' || r == '\u2029': // line and paragraph separators
		return true
	}
	return isBidiControl(r) || isInvisible(r)
}

// isInvisible reports the zero-width characters that make two different names look the same:
// U+200B–U+200D, the word joiner U+2060 and the byte-order mark U+FEFF.
func isInvisible(r rune) bool {
	return (r >= '\u200b' && r <= '\u200d') || r == '\u2060' || r == '\ufeff'
}

// quoteName writes a file name for one line as git writes names in a diff header: as it is when
// nothing in it needs escaping, else in double quotes with \ and " escaped and every character
// a terminal could act on (newline, bidi and zero-width ones included) written as a visible
// escape, so a name cannot break the header into lines or pass for another name.
func quoteName(name string) string {
	plain := true
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		if r == '"' || r == '\\' || needsEscape(r, size, false) {
			plain = false
			break
		}
		i += size
	}
	if plain {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case needsEscape(r, size, false):
			writeEscape(&b, name[i], r, size)
		default:
			b.WriteString(name[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// isBidiControl reports the characters that reorder text: the embeddings and overrides
// U+202A–U+202E, the isolates U+2066–U+2069, and the marks U+200E, U+200F and U+061C.
func isBidiControl(r rune) bool {
	return (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f' || r == '\u061c'
}

// writeEscape writes the visible form of one character that needs escaping; first is its first
// byte, used for bytes that are not UTF-8.
func writeEscape(b *strings.Builder, first byte, r rune, size int) {
	switch {
	case r == utf8.RuneError && size == 1:
		fmt.Fprintf(b, `\x%02x`, first)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x80:
		fmt.Fprintf(b, `\x%02x`, r)
	default:
		fmt.Fprintf(b, `\u%04x`, r)
	}
}

// quoteArgv writes argv as a POSIX shell would read it back, so the words a program gets are
// visible: `echo 'a b'` is one argument, `echo a b` two. A word with characters a terminal could
// act on is written in ANSI-C quoting ($'…', as bash and zsh read it) with those characters
// escaped, so the whole command stays on one visible line.
func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = quoteWord(a)
	}
	return strings.Join(parts, " ")
}

func quoteWord(w string) string {
	if w == "" {
		return "''"
	}
	plain, printable := true, true
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		if needsEscape(r, size, false) {
			plain, printable = false, false
			break
		}
		if !shellPlain(r) {
			plain = false
		}
		i += size
	}
	switch {
	case plain:
		return w
	case printable:
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteByte(byte(r))
		case needsEscape(r, size, false):
			writeEscape(&b, w[i], r, size)
		default:
			b.WriteString(w[i : i+size])
		}
		i += size
	}
	b.WriteString("'")
	return b.String()
}

// shellPlain reports characters a shell takes literally in an unquoted word.
func shellPlain(r rune) bool {
	if r >= utf8.RuneSelf {
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)
}
