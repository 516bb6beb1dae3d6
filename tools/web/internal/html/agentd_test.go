package html_test

import (
	"bytes"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	upstream "golang.org/x/net/html"

	"github.com/agentd-dev/agentd/tools/web/internal/html"
)

// upstreamDir is golang.org/x/net's directory in the module cache, at go.mod's version.
func upstreamDir(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/net").Output()
	if err != nil {
		t.Fatalf("go list -m golang.org/x/net: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		t.Fatal("golang.org/x/net is not in the module cache")
	}
	return dir
}

var entityLine = regexp.MustCompile(`(?m)^\s*("[^"]+":)\s*(.+),$`)

// entries lists a map literal's entries, one "key: value" string each, whatever the spacing.
func entries(src []byte) map[string]string {
	out := map[string]string{}
	for _, m := range entityLine.FindAllSubmatch(src, -1) {
		out[string(m[1])] = string(m[2])
	}
	return out
}

// TestSameAsUpstream holds the copy to the x/net in go.mod: every file is upstream's but for the
// atom import path, and the entity tables hold the same entries (built at first use here).
func TestSameAsUpstream(t *testing.T) {
	up := upstreamDir(t)
	for _, name := range []string{"const.go", "doc.go", "doctype.go", "foreign.go", "iter.go", "node.go",
		"nodetype_string.go", "parse.go", "render.go", "token.go", "escape.go", "atom/atom.go", "atom/table.go"} {
		want, err := os.ReadFile(filepath.Join(up, "html", name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(name, "atom/") {
			want = bytes.ReplaceAll(want, []byte(`"golang.org/x/net/html/atom"`), []byte(`"github.com/agentd-dev/agentd/tools/web/internal/html/atom"`))
		}
		if name == "escape.go" {
			want = regexp.MustCompile(`\bentity(2?)\[`).ReplaceAll(want, []byte("entity${1}.get()["))
		}
		want = lazyTables(t, name, want)
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from golang.org/x/net/html's (%s): copy it again and redo the changes in README.md", name, up)
		}
	}
	// Every upstream file is here (a new one would be missed otherwise).
	files, _ := filepath.Glob(filepath.Join(up, "html", "*.go"))
	for _, f := range files {
		if base := filepath.Base(f); !strings.HasSuffix(base, "_test.go") {
			if _, err := os.Stat(base); err != nil {
				t.Errorf("upstream's %s is not in the copy", base)
			}
		}
	}
	want, err := os.ReadFile(filepath.Join(up, "html", "entity.go"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("entity.go")
	if err != nil {
		t.Fatal(err)
	}
	we, ge := entries(want), entries(got)
	if len(we) < 2000 {
		t.Fatalf("found %d entries in upstream's entity.go: the matcher is broken", len(we))
	}
	if len(ge) != len(we) {
		t.Errorf("the copy has %d entities, upstream %d", len(ge), len(we))
	}
	for k, v := range we {
		if ge[k] != v {
			t.Errorf("entity %s: upstream %s, the copy %q", k, v, ge[k])
		}
	}
}

// corpus is HTML of the kinds web_fetch meets, and malformed HTML, entities of every sort
// among it.
// lazyMaps are upstream's package-level map literals, which the copy builds at first use
// (lazyMap in lazy.go) instead of in the package's init.
var lazyMaps = []string{"isSpecialElementMap", "breakout", "svgTagNameAdjustments", "mathMLAttributeAdjustments",
	"svgAttributeAdjustments", "defaultScopeStopTags", "voidElements"}

// lazyTables is upstream's file src with the copy's changes for its init: each map of lazyMaps
// declared as a lazyMap and read through get(), and token.go's nul and replacement arrays
// instead of []byte conversions. The result is gofmt'ed, as the copy is.
func lazyTables(t *testing.T, name string, src []byte) []byte {
	for _, m := range lazyMaps {
		// Go's regexp has no back-references: one pattern per indentation (top level, or in a
		// var block).
		for _, indent := range []string{"", "\t"} {
			decl := regexp.MustCompile(`(?ms)^` + indent + `((?:var )?` + m + ` = )map\[([^\]]+)\](\S+)\{\n(.*?)\n` + indent + `\}\n`)
			src = decl.ReplaceAll(src, []byte(indent+"${1}lazyMap[${2}, ${3}]{build: func() map[${2}]${3} {\nreturn map[${2}]${3}{\n${4}\n}\n}}\n"))
		}
		src = regexp.MustCompile(`\b`+m+`\[`).ReplaceAll(src, []byte(m+".get()["))
		src = bytes.ReplaceAll(src, []byte(", "+m+")"), []byte(", "+m+".get())"))
	}
	if name == "token.go" {
		for _, r := range [][2]string{
			{`nul         = []byte("\x00")`, `nul         = [...]byte{0x00}`},
			{`replacement = []byte("\ufffd")`, `replacement = [...]byte{0xef, 0xbf, 0xbd}`},
			{`bytes.Contains(s, nul)`, `bytes.Contains(s, nul[:])`},
			{`, nul, replacement`, `, nul[:], replacement[:]`},
		} {
			src = bytes.ReplaceAll(src, []byte(r[0]), []byte(r[1]))
		}
	}
	out, err := format.Source(src)
	if err != nil {
		t.Fatalf("%s after the copy's changes: %v", name, err)
	}
	return out
}

var corpus = []string{
	`<!doctype html><html><head><title>The  Title</title><style>body{}</style><script>alert("x")</script></head>` +
		`<body><nav><a href="/home">Home</a></nav><h1>Heading one</h1><p>Some <b>bold</b> text and a <a href="https://example.com/x?a=1&amp;b=2">link</a>.</p>` +
		`<pre>line 1\n  line 2</pre><ul><li>one<li>two</ul><table><tr><td>a<td>b</table></body></html>`,
	`<p>&amp; &lt; &gt; &quot; &apos; &nbsp; &copy &copysr; &notit; &notin; &NotNestedLessLess; &nLt; &vsubnE; &#65; &#x263A; &#0; &#xD800; &#1234567; &bogus; & &;</p>`,
	`<a href="?x=1&copy=2&amp=3" title="&lt;&gt&notit=">q</a><img alt="&AElig&Aacute;&aacute">`,
	`<svg><foreignObject><p>x</p></foreignObject><math><mi>&pi;</mi></math></svg><template><b>t</b></template>`,
	`<table><b>misnested<tr><td>cell</b></td></table><frameset><frame></frameset><select><option>1<option>2</select>`,
	`<!-- comment --><?pi?><![CDATA[x]]><div <div>>< p><textarea>&lt;raw&gt;</textarea><plaintext>&amp; everything`,
	"\x00<p>\x00nul &#x0; and \r\n newlines\r</p>",
}

// TestSameOutputAsUpstream parses and renders the corpus, tokenizes it, and unescapes every
// entity through both packages.
func TestSameOutputAsUpstream(t *testing.T) {
	for _, doc := range corpus {
		var a, b bytes.Buffer
		na, erra := html.Parse(strings.NewReader(doc))
		nb, errb := upstream.Parse(strings.NewReader(doc))
		if (erra == nil) != (errb == nil) {
			t.Fatalf("Parse(%q): %v, upstream %v", doc, erra, errb)
		}
		html.Render(&a, na)
		upstream.Render(&b, nb)
		if a.String() != b.String() {
			t.Errorf("Parse and Render of %q:\n%s\nupstream:\n%s", doc, a.String(), b.String())
		}
		ta, tb := html.NewTokenizer(strings.NewReader(doc)), upstream.NewTokenizer(strings.NewReader(doc))
		for {
			ka, kb := ta.Next(), tb.Next()
			if int(ka) != int(kb) || ta.Token().String() != tb.Token().String() {
				t.Errorf("tokens of %q differ: %v %q, upstream %v %q", doc, ka, ta.Token().String(), kb, tb.Token().String())
				break
			}
			if ka == html.ErrorToken {
				break
			}
		}
	}
	src, err := os.ReadFile("entity.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := range entries(src) {
		name := strings.Trim(k, `":`)
		for _, s := range []string{"&" + name, "&" + name + "x", "x&" + name + "=y"} {
			if got, want := html.UnescapeString(s), upstream.UnescapeString(s); got != want {
				t.Errorf("UnescapeString(%q) = %q, upstream %q", s, got, want)
			}
		}
		attr := `<a title="&` + name + `=1&` + name + `">`
		ta, tb := html.NewTokenizer(strings.NewReader(attr)), upstream.NewTokenizer(strings.NewReader(attr))
		ta.Next()
		tb.Next()
		if a, b := ta.Token().String(), tb.Token().String(); a != b {
			t.Errorf("%s: %s, upstream %s", attr, a, b)
		}
		n++
	}
	if n < 2000 {
		t.Fatalf("unescaped %d entities: the matcher is broken", n)
	}
}
