// Package glob matches slash-separated paths against shell globs with `**`, the one glob dialect
// the tools and the permission policy share: `*` and `?` stay within a path segment, `**` spans
// segments, `[...]` is a class, `{a,b}` an alternation, and a pattern without a slash matches the
// base name anywhere (as in .gitignore and ripgrep's -g).
package glob

import (
	"regexp"
	"strings"
)

// Glob is a compiled pattern.
type Glob struct {
	re       *regexp.Regexp
	baseOnly bool
	src      string
}

// Compile parses pattern. A trailing slash is dropped (directories and files match alike).
func Compile(pattern string) (*Glob, error) {
	p := strings.TrimSuffix(strings.ReplaceAll(pattern, `\`, "/"), "/")
	p = strings.TrimPrefix(p, "./")
	baseOnly := !strings.Contains(p, "/")
	var b strings.Builder
	b.WriteString("^")
	depth := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '*':
			if i+1 < len(p) && p[i+1] == '*' {
				// `**/` matches zero or more leading directories; a bare `**` anything.
				if i+2 < len(p) && p[i+2] == '/' {
					b.WriteString("(?:.*/)?")
					i += 2
				} else {
					b.WriteString(".*")
					i++
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case '{':
			depth++
			b.WriteString("(?:")
		case '}':
			if depth > 0 {
				depth--
				b.WriteString(")")
			} else {
				b.WriteString(`\}`)
			}
		case ',':
			if depth > 0 {
				b.WriteString("|")
			} else {
				b.WriteString(",")
			}
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	for ; depth > 0; depth-- {
		b.WriteString(")")
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, err
	}
	return &Glob{re: re, baseOnly: baseOnly, src: pattern}, nil
}

// Match reports whether the slash-separated path (relative to a root, or absolute) matches. A
// path under a matching directory matches too.
func (g *Glob) Match(path string) bool {
	path = strings.TrimPrefix(strings.ReplaceAll(path, `\`, "/"), "./")
	if g.baseOnly {
		// A base-name pattern matches the file or any directory it sits in.
		for _, seg := range strings.Split(path, "/") {
			if seg != "" && g.re.MatchString(seg) {
				return true
			}
		}
		return false
	}
	if g.re.MatchString(path) {
		return true
	}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '/' && g.re.MatchString(path[:i]) {
			return true
		}
	}
	return false
}

// String returns the source pattern.
func (g *Glob) String() string { return g.src }
