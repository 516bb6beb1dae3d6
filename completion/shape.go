package completion

import "strings"

// maxBlockLines bounds a multi-line suggestion.
const maxBlockLines = 32

// Shape turns a model's raw fill-in-the-middle text into what is shown at the cursor:
//
//   - in the middle of a line (text follows the cursor on its line) only the rest of that line,
//     else a block: lines until a blank line or one indented less than the cursor's line;
//   - without the text that follows the cursor repeated at its end (the closing parenthesis
//     already there, the next lines of the file);
//   - "" when what is left is only whitespace.
func Shape(raw, prefix, suffix string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	raw = strings.ReplaceAll(raw, "\r\n", "\n")
	restOfLine, _, _ := strings.Cut(suffix, "\n")
	var text string
	if strings.TrimSpace(restOfLine) != "" {
		text, _, _ = strings.Cut(raw, "\n")
		text = trimOverlap(text, restOfLine)
	} else {
		text = block(raw, indentOf(currentLine(prefix)))
		text = trimRepeatedLines(text, suffix)
		if !strings.Contains(text, "\n") {
			text = trimOverlap(text, restOfLine)
		}
	}
	text = strings.TrimRight(text, " \t\n")
	if strings.TrimSpace(text) == "" {
		return ""
	}
	return text
}

// currentLine is the part of the cursor's line before the cursor.
func currentLine(prefix string) string {
	if i := strings.LastIndexByte(prefix, '\n'); i >= 0 {
		return prefix[i+1:]
	}
	return prefix
}

// indentOf is the width of s's leading whitespace (a tab counts as one, as it is compared only
// with lines of the same file).
func indentOf(s string) int {
	return len(s) - len(strings.TrimLeft(s, " \t"))
}

// block keeps the first line (it continues the cursor's line) and the lines after it until a
// blank line or a line indented less than base.
func block(raw string, base int) string {
	lines := strings.Split(raw, "\n")
	out := lines[:1]
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" || indentOf(l) < base || len(out) == maxBlockLines {
			break
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// trimRepeatedLines drops the suggestion's last lines when they are the lines that already
// follow the cursor (compared without their indentation).
func trimRepeatedLines(text, suffix string) string {
	lines := strings.Split(text, "\n")
	var next []string
	for _, l := range strings.Split(suffix, "\n") {
		if strings.TrimSpace(l) != "" {
			next = append(next, strings.TrimSpace(l))
		}
		if len(next) == len(lines) {
			break
		}
	}
	// The longest tail of lines (not the first) equal to the head of next.
	for k := min(len(lines)-1, len(next)); k > 0; k-- {
		match := true
		for i := 0; i < k; i++ {
			if strings.TrimSpace(lines[len(lines)-k+i]) != next[i] {
				match = false
				break
			}
		}
		if match {
			return strings.Join(lines[:len(lines)-k], "\n")
		}
	}
	return text
}

// trimOverlap drops the end of text that repeats the start of rest (the text after the cursor
// on its line): `"hi")` before `)` becomes `"hi"`.
func trimOverlap(text, rest string) string {
	rest = strings.TrimLeft(rest, " \t")
	for k := min(len(text), len(rest)); k > 0; k-- {
		if strings.HasSuffix(text, rest[:k]) {
			return text[:len(text)-k]
		}
	}
	return text
}
