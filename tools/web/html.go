package web

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// HTMLText reduces an HTML document to readable text: headings as Markdown headings, paragraphs
// and list items on lines of their own, links as "text [url]", pre blocks kept verbatim in
// fences; script, style, nav, forms and the like dropped. The text is data for the model: nothing
// in it is interpreted.
func HTMLText(doc []byte) (title, text string) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return "", string(doc)
	}
	w := &textWriter{}
	w.node(root)
	return CleanTitle(w.title), w.String()
}

type textWriter struct {
	b     strings.Builder
	title string
	// pendingBreak is the number of newlines owed before the next text (1 line, 2 paragraph).
	pendingBreak int
	pre          int
}

// skipped reports whether element a carries no readable text, or chrome the reader does not
// want. It and block are switches: map literals are built by the package's init at every start.
func skipped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Nav, atom.Template,
		atom.Svg, atom.Iframe, atom.Object, atom.Embed, atom.Canvas,
		atom.Form, atom.Button, atom.Select, atom.Input, atom.Textarea,
		atom.Footer, atom.Aside:
		return true
	}
	return false
}

// block reports whether element a starts a block of text.
func block(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header,
		atom.Ul, atom.Ol, atom.Dl, atom.Dt, atom.Dd, atom.Table, atom.Tr,
		atom.Blockquote, atom.Figure, atom.Figcaption, atom.Hr, atom.Details, atom.Summary:
		return true
	}
	return false
}

func (w *textWriter) brk(n int) {
	if w.b.Len() > 0 && n > w.pendingBreak {
		w.pendingBreak = n
	}
}

func (w *textWriter) write(s string) {
	if s == "" {
		return
	}
	if w.pendingBreak > 0 {
		cur := w.b.String()
		cur = strings.TrimRight(cur, " ")
		w.b.Reset()
		w.b.WriteString(cur)
		w.b.WriteString(strings.Repeat("\n", w.pendingBreak))
		w.pendingBreak = 0
	}
	w.b.WriteString(s)
}

// inline writes text with runs of white space collapsed, as a browser renders it.
func (w *textWriter) inline(s string) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		if s != "" && w.b.Len() > 0 && w.pendingBreak == 0 && !strings.HasSuffix(w.b.String(), " ") && !strings.HasSuffix(w.b.String(), "\n") {
			w.b.WriteByte(' ')
		}
		return
	}
	lead := s[0] == ' ' || s[0] == '\n' || s[0] == '\t' || s[0] == '\r'
	trail := strings.ContainsAny(s[len(s)-1:], " \n\t\r")
	out := strings.Join(fields, " ")
	if lead && w.b.Len() > 0 && w.pendingBreak == 0 {
		cur := w.b.String()
		if !strings.HasSuffix(cur, " ") && !strings.HasSuffix(cur, "\n") {
			out = " " + out
		}
	}
	if trail {
		out += " "
	}
	w.write(out)
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		if w.pre > 0 {
			w.write(n.Data)
		} else {
			w.inline(n.Data)
		}
		return
	case html.DocumentNode:
		w.children(n)
		return
	case html.ElementNode:
	default:
		return
	}
	if n.DataAtom == atom.Title {
		if w.title == "" {
			w.title = textOf(n)
		}
		return
	}
	if skipped(n.DataAtom) || hidden(n) {
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.brk(2)
		level := int(n.Data[1] - '0')
		w.write(strings.Repeat("#", level) + " ")
		w.children(n)
		w.brk(2)
	case atom.Pre:
		w.brk(2)
		w.write("```\n")
		w.pre++
		w.children(n)
		w.pre--
		if !strings.HasSuffix(w.b.String(), "\n") {
			w.write("\n")
		}
		w.write("```")
		w.brk(2)
	case atom.Br:
		if w.pre > 0 {
			w.write("\n")
		} else {
			w.brk(1)
		}
	case atom.Li:
		w.brk(1)
		w.write("- ")
		w.children(n)
		w.brk(1)
	case atom.Td, atom.Th:
		w.children(n)
		w.write(" | ")
	case atom.A:
		href := strings.TrimSpace(attr(n, "href"))
		start := w.b.Len()
		w.children(n)
		if href != "" && !strings.HasPrefix(href, "#") && !strings.HasPrefix(strings.ToLower(href), "javascript:") && w.b.Len() > start {
			w.write(" [" + href + "]")
		}
	case atom.Img:
		if alt := strings.TrimSpace(attr(n, "alt")); alt != "" {
			w.inline("[image: " + alt + "]")
		}
	case atom.Code:
		if w.pre > 0 {
			w.children(n)
		} else {
			w.write("`")
			w.children(n)
			w.write("`")
		}
	default:
		if block(n.DataAtom) {
			w.brk(2)
			w.children(n)
			w.brk(2)
			return
		}
		w.children(n)
	}
}

// hidden reports an element the page hides from readers (hidden, aria-hidden, display:none):
// text a person does not see is a classic carrier of instructions aimed at the model.
func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") {
				return true
			}
		case "style":
			s := strings.ReplaceAll(strings.ToLower(a.Val), " ", "")
			if strings.Contains(s, "display:none") || strings.Contains(s, "visibility:hidden") {
				return true
			}
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

// String is the text with trailing spaces trimmed from each line and at most one blank line in a
// row outside pre blocks.
func (w *textWriter) String() string {
	lines := strings.Split(w.b.String(), "\n")
	out := make([]string, 0, len(lines))
	blank := 0
	fence := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if !fence {
			l = strings.TrimRight(l, " \t")
		}
		if strings.TrimSpace(l) == "" && !fence {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// CleanTitle is a page or search result title fit for one line of tool output: whitespace of
// any kind (newlines, U+2028 included) becomes one space, and control and format characters are
// dropped: ESC and the other C0 and C1 controls that make a terminal hide text or retitle its
// window, the bidi overrides and isolates (U+202E) that reorder what is shown, the zero-width
// characters that make two titles look alike. The visible text is kept.
func CleanTitle(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r) || r == '\u2028' || r == '\u2029':
			space = b.Len() > 0
			continue
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
