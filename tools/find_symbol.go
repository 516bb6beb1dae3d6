package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/workspace"
)

type findSymbolIn struct {
	Query      string `json:"query" schema:"maxLength=200"`
	Kind       string `json:"kind,omitempty" schema:"maxLength=40"`
	Path       string `json:"path,omitempty" schema:"maxLength=4096"`
	MaxResults int    `json:"max_results,omitempty" schema:"minimum=1,maximum=500"`
}

func (in findSymbolIn) title() string {
	if in.Query == "" {
		return ""
	}
	return "Find symbol " + in.Query
}

// FindSymbol is the find_symbol tool.
var FindSymbol Tool = &typed[findSymbolIn]{spec: Spec{Name: "find_symbol", Effect: EffectRead, Kind: "search", Title: "Find symbol"}, run: findSymbol}

func findSymbol(ctx context.Context, env *Env, in findSymbolIn) Result {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return Errorf("field query is empty")
	}
	if in.MaxResults == 0 {
		in.MaxResults = 50
	}
	scope := ""
	if in.Path != "" {
		abs, bad := resolve(env, "path", in.Path, false)
		if bad != nil {
			return *bad
		}
		scope = abs
	}
	var syms []workspace.Symbol
	source := "the editor's language servers"
	lsp, err := env.WS.WorkspaceSymbols(ctx, q)
	if err == nil {
		for _, s := range lsp {
			if _, err := env.Roots.Resolve(s.Path, false); err != nil {
				continue // library code outside the roots
			}
			syms = append(syms, s)
		}
	}
	var notes []string
	if err != nil || len(syms) == 0 {
		if err != nil && !errors.Is(err, workspace.ErrUnsupported) && ctx.Err() == nil {
			notes = append(notes, fmt.Sprintf("the editor's symbol search failed (%v)", err))
		}
		var how string
		syms, how, err = scanSymbols(ctx, env, q, scope)
		if err != nil {
			if ctx.Err() != nil {
				return Errorf("cancelled")
			}
			return Errorf("symbol scan failed: %v", err)
		}
		source = how
	}
	syms = rankSymbols(syms, q, in.Kind, scope)
	var b strings.Builder
	var locs []Location
	for i, s := range syms {
		if i == in.MaxResults {
			fmt.Fprintf(&b, "[… %d more; narrow with kind or path]\n", len(syms)-in.MaxResults)
			break
		}
		extra := ""
		if s.Container != "" {
			extra = " in " + s.Container
		}
		fmt.Fprintf(&b, "%s (%s%s) %s:%d\n", s.Name, strings.ToLower(s.Kind), extra, rel(env, s.Path), s.Line)
		if len(locs) < 50 {
			locs = append(locs, Location{Path: s.Path, Line: s.Line})
		}
	}
	if len(syms) == 0 {
		fmt.Fprintf(&b, "No definitions matching %q found", q)
		if in.Kind != "" {
			fmt.Fprintf(&b, " of kind %q", in.Kind)
		}
		b.WriteString("; try search_text for the name.\n")
	}
	fmt.Fprintf(&b, "[from %s", source)
	for _, n := range notes {
		fmt.Fprintf(&b, "; %s", n)
	}
	b.WriteString("]\n")
	return Result{Output: b.String(), Locations: locs, Raw: map[string]any{"count": len(syms), "source": source}}
}

// rankSymbols filters by kind and scope, and orders exact matches, then case-insensitive exact,
// then prefix, then substring; within a rank by path and line.
func rankSymbols(syms []workspace.Symbol, q, kind, scope string) []workspace.Symbol {
	lq := strings.ToLower(q)
	rank := func(s workspace.Symbol) int {
		switch n := s.Name; {
		case n == q:
			return 0
		case strings.EqualFold(n, q):
			return 1
		case strings.HasPrefix(strings.ToLower(n), lq):
			return 2
		case strings.Contains(strings.ToLower(n), lq):
			return 3
		}
		return 4
	}
	seen := map[string]bool{}
	var out []workspace.Symbol
	for _, s := range syms {
		if rank(s) == 4 {
			continue
		}
		if kind != "" && !strings.EqualFold(s.Kind, kind) && !strings.Contains(strings.ToLower(s.Kind), strings.ToLower(kind)) {
			continue
		}
		if scope != "" && s.Path != scope && !strings.HasPrefix(s.Path, scope+string(filepath.Separator)) {
			continue
		}
		key := fmt.Sprintf("%s\x00%s\x00%d", s.Name, s.Path, s.Line)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank(out[i]), rank(out[j])
		if ri != rj {
			return ri < rj
		}
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// scanSymbols finds definitions without the editor: only files that contain the query
// (case-insensitively) can define it, so the search engine picks the candidates and ctags or the
// built-in patterns read just those.
func scanSymbols(ctx context.Context, env *Env, q, scope string) ([]workspace.Symbol, string, error) {
	var starts []string
	if scope != "" {
		starts = []string{scope}
	} else {
		starts = env.Roots.Dirs()
	}
	m, err := compileMatcher(q, true, true)
	if err != nil {
		return nil, "", err
	}
	var files []string
	for _, start := range starts {
		if _, err := os.Stat(start); err != nil {
			continue
		}
		out, err := search(ctx, searchOpts{Root: rootOf(env, start), Start: start, Matcher: m, MaxPerFile: 1, MaxKept: 1})
		if err != nil {
			return nil, "", err
		}
		for _, f := range out.Files {
			files = append(files, f.Path)
		}
	}
	if len(files) > 5000 {
		files = files[:5000]
	}
	if len(files) == 0 {
		return nil, "a scan of the project files", nil
	}
	if ctagsPath() != "" && len(files) <= ctagsMaxFiles {
		if syms, err := runCtagsParallel(ctx, files, q); err == nil {
			return syms, "universal-ctags", nil
		}
	}
	var syms []workspace.Symbol
	for _, f := range files {
		syms = append(syms, scanDefinitions(f, q)...)
	}
	return syms, "agentd's definition scanner", nil
}

// ctagsMaxFiles is the most candidate files handed to ctags; past it the built-in scanner
// answers. ctags parses every candidate whole and reports every tag in it, where the built-in
// scanner looks only at the lines that contain the query: with 5,000 candidates (a 20k-file
// tree where the query is in every file) ctags took 2-4 times the scanner's wall time at the
// same RSS (bench/e2e), and a query that common is answered by its first results anyway.
const ctagsMaxFiles = 1000

// ctagsOnce finds universal-ctags with JSON output once, at first use.
var ctagsOnce = sync.OnceValue(func() string {
	p, err := exec.LookPath("ctags")
	if err != nil {
		return ""
	}
	// --list-features exists only in universal-ctags (Exuberant ctags fails on it), so one
	// probe tells both that and whether JSON output is built in; each ctags start counts
	// (bench/e2e).
	if out, err := exec.Command(p, "--options=NONE", "--list-features").Output(); err != nil || !bytes.Contains(out, []byte("json")) {
		return ""
	}
	return p
})

// ctagsPath is universal-ctags with JSON output, or "".
var ctagsPath = ctagsOnce

// runCtagsParallel splits files among one ctags process per CPU (ctags parses on one thread,
// and parsing is most of its time).
func runCtagsParallel(ctx context.Context, files []string, q string) ([]workspace.Symbol, error) {
	n := min(runtime.NumCPU(), (len(files)+255)/256)
	if n <= 1 {
		return runCtags(ctx, files, q)
	}
	parts := make([][]workspace.Symbol, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i], errs[i] = runCtags(ctx, files[i*len(files)/n:(i+1)*len(files)/n], q)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(parts...), nil
}

// runCtags runs universal-ctags over files and keeps the tags whose name contains q
// (case-insensitively). The output is read as it streams and only lines that can match are
// decoded: a 20k-file tree yields ~100 MB of tags, and buffering and decoding them all took the
// daemon from 12 MiB to 786 MiB (issue 18). --sort=no lets ctags write each tag as it finds it
// instead of holding them all to sort, and -P drops the source line (the field most of the
// bytes were in, and a source of false candidates for the filter). --options=NONE, which must
// come first, stops ctags reading ./.ctags.d and the like: the working directory is usually the
// project, and a cloned repository's options would steer a program agentd runs on its own.
func runCtags(ctx context.Context, files []string, q string) ([]workspace.Symbol, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ctagsPath(), "--options=NONE", "--output-format=json", "--sort=no", "--fields=-P+nKZ", "--extras=-F", "-f", "-", "-L", "-")
	cmd.Stdin = strings.NewReader(strings.Join(files, "\n") + "\n")
	setProcessGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	syms, err := filterTags(out, q)
	if err != nil {
		cancel() // stop ctags rather than wait for output nobody reads
	}
	if werr := cmd.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	return syms, nil
}

// maxTagLine is the longest ctags output line filterTags decodes; longer ones (a typeref of a
// generated file, say) are skipped.
const maxTagLine = 64 << 10

// filterTags reads ctags' JSON lines from r and returns the tags whose name contains q
// (case-insensitively). Memory is the read buffer plus the matches, whatever the input size.
func filterTags(r io.Reader, q string) ([]workspace.Symbol, error) {
	lq := strings.ToLower(q)
	// An ASCII query is looked for in each line, lowered byte by byte, before decoding it:
	// every line that holds a matching name holds the query. A non-ASCII one may be escaped
	// in the JSON, so every line is decoded.
	prefilter := isASCII(lq)
	needle := []byte(lq)
	br := bufio.NewReaderSize(r, maxTagLine)
	var low []byte
	var syms []workspace.Symbol
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if len(line) > 0 {
			low = asciiLower(low[:0], line)
			if !prefilter || bytes.Contains(low, needle) {
				var tag struct {
					Type  string `json:"_type"`
					Name  string `json:"name"`
					Path  string `json:"path"`
					Line  int    `json:"line"`
					Kind  string `json:"kind"`
					Scope string `json:"scope"`
				}
				if json.Unmarshal(line, &tag) == nil && tag.Type == "tag" && strings.Contains(strings.ToLower(tag.Name), lq) {
					syms = append(syms, workspace.Symbol{Name: tag.Name, Kind: tag.Kind, Container: tag.Scope, Path: tag.Path, Line: tag.Line})
				}
			}
		}
		if err == io.EOF {
			return syms, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// asciiLower appends b to dst with A-Z lowered.
func asciiLower(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

type defPattern struct {
	re   *regexp.Regexp
	kind string
}

// defSpec is the patterns of one kind of definition.
type defSpec struct {
	kind  string
	exprs []string
}

// language is one language's definition patterns, compiled when its first file is scanned:
// compiling all ~45 at package init cost agentd's start-up more than any other init. A
// package-level language is a composite literal the compiler lays out (strings beside a zero
// sync.Once), so the table costs the init nothing either.
type language struct {
	defs []defSpec
	once sync.Once
	pats []defPattern
}

// patterns are the language's compiled patterns.
func (l *language) patterns() []defPattern {
	l.once.Do(func() {
		for _, d := range l.defs {
			for _, e := range d.exprs {
				l.pats = append(l.pats, defPattern{regexp.MustCompile(e), d.kind})
			}
		}
	})
	return l.pats
}

var (
	goDefs = language{defs: []defSpec{
		{"method", []string{`^func\s+\(\s*\w*\s*\*?\s*(?P<container>\w+)[^)]*\)\s*(?P<name>\w+)`}},
		{"function", []string{`^func\s+(?P<name>\w+)`}},
		{"type", []string{`^type\s+(?P<name>\w+)`, `^\t(?P<name>[A-Za-z_]\w*)\s+(?:struct|interface)\b`}},
		{"variable", []string{`^var\s+(?P<name>\w+)`}},
		{"constant", []string{`^const\s+(?P<name>\w+)`}},
	}}
	pyDefs = language{defs: []defSpec{
		{"function", []string{`^\s*(?:async\s+)?def\s+(?P<name>\w+)`}},
		{"class", []string{`^\s*class\s+(?P<name>\w+)`}},
		{"variable", []string{`^(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=[^=]`}},
	}}
	jsDefs = language{defs: []defSpec{
		{"function", []string{`^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[\w$]+)`}},
		{"class", []string{`^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+(?P<name>[\w$]+)`}},
		{"interface", []string{`^\s*(?:export\s+)?(?:declare\s+)?interface\s+(?P<name>[\w$]+)`}},
		{"type", []string{`^\s*(?:export\s+)?(?:declare\s+)?type\s+(?P<name>[\w$]+)\s*(?:<[^=]*>)?\s*=`}},
		{"enum", []string{`^\s*(?:export\s+)?(?:const\s+)?enum\s+(?P<name>[\w$]+)`}},
		{"constant", []string{`^\s*(?:export\s+)?const\s+(?P<name>[\w$]+)\s*(?::[^=]+)?=`}},
		{"variable", []string{`^\s*(?:export\s+)?(?:let|var)\s+(?P<name>[\w$]+)`}},
		{"method", []string{`^\s+(?:(?:public|private|protected|static|async|readonly|override|get|set)\s+)*(?P<name>[\w$]+)\s*(?:<[^>]*>)?\([^)]*\)\s*(?::\s*[^{]+)?\{\s*$`}},
	}}
	rustDefs = language{defs: []defSpec{
		{"function", []string{`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?fn\s+(?P<name>\w+)`}},
		{"struct", []string{`^\s*(?:pub(?:\([^)]*\))?\s+)?struct\s+(?P<name>\w+)`}},
		{"enum", []string{`^\s*(?:pub(?:\([^)]*\))?\s+)?enum\s+(?P<name>\w+)`}},
		{"trait", []string{`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+)?trait\s+(?P<name>\w+)`}},
		{"type", []string{`^\s*(?:pub(?:\([^)]*\))?\s+)?type\s+(?P<name>\w+)`}},
		{"module", []string{`^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(?P<name>\w+)`}},
		{"constant", []string{`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?(?P<name>\w+)`}},
		{"macro", []string{`^\s*macro_rules!\s*(?P<name>\w+)`}},
	}}
	jvmDefs = language{defs: []defSpec{
		{"class", []string{`^\s*(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|partial|inner)\s+)*(?:class|record|object)\s+(?P<name>\w+)`}},
		{"interface", []string{`^\s*(?:(?:public|private|protected|internal|static|sealed|partial)\s+)*interface\s+(?P<name>\w+)`}},
		{"enum", []string{`^\s*(?:(?:public|private|protected|internal|static)\s+)*enum\s+(?:class\s+)?(?P<name>\w+)`}},
		{"function", []string{`^\s*(?:(?:public|private|protected|internal|override|suspend|inline|open)\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?(?P<name>\w+)`}},
		{"method", []string{`^\s*(?:(?:public|private|protected|internal|static|final|abstract|synchronized|virtual|override|async|native)\s+)+[\w<>\[\],.?\s]+?\s+(?P<name>\w+)\s*\(`}},
	}}
	cDefs = language{defs: []defSpec{
		{"macro", []string{`^\s*#\s*define\s+(?P<name>\w+)`}},
		{"struct", []string{`^\s*(?:typedef\s+)?(?:struct|union)\s+(?P<name>\w+)\s*\{?\s*$`}},
		{"class", []string{`^\s*(?:template\s*<[^>]*>\s*)?class\s+(?P<name>\w+)`}},
		{"enum", []string{`^\s*(?:typedef\s+)?enum\s+(?:class\s+)?(?P<name>\w+)`}},
		{"type", []string{`^\s*typedef\s+.*?\b(?P<name>\w+)\s*;\s*$`}},
		{"function", []string{`^[A-Za-z_][\w\s\*&:<>,]*?[\s\*&](?P<name>[A-Za-z_][\w:~]*)\s*\([^;]*$`}},
	}}
	rubyDefs = language{defs: []defSpec{
		{"method", []string{`^\s*def\s+(?:self\.)?(?P<name>\w+[?!=]?)`}},
		{"class", []string{`^\s*class\s+(?P<name>[\w:]+)`}},
		{"module", []string{`^\s*module\s+(?P<name>[\w:]+)`}},
	}}
	phpDefs = language{defs: []defSpec{
		{"function", []string{`^\s*(?:(?:public|private|protected|static|final|abstract)\s+)*function\s+&?(?P<name>\w+)`}},
		{"class", []string{`^\s*(?:(?:final|abstract)\s+)?(?:class|trait|enum)\s+(?P<name>\w+)`}},
		{"interface", []string{`^\s*interface\s+(?P<name>\w+)`}},
	}}
)

// languageOf is the language of a file extension (lower case), or nil: a switch, where a map
// literal would be built by the package's init at every start.
func languageOf(ext string) *language {
	switch ext {
	case ".go":
		return &goDefs
	case ".py", ".pyi":
		return &pyDefs
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return &jsDefs
	case ".rs":
		return &rustDefs
	case ".java", ".kt", ".kts", ".cs", ".scala":
		return &jvmDefs
	case ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".m", ".mm":
		return &cDefs
	case ".rb":
		return &rubyDefs
	case ".php":
		return &phpDefs
	}
	return nil
}

// notName reports whether a word a pattern took for a name is a keyword instead.
func notName(word string) bool {
	switch word {
	case "if", "for", "while", "switch", "catch", "return", "function", "else", "new", "sizeof":
		return true
	}
	return false
}

// scanDefinitions finds definitions whose name contains q in one file.
func scanDefinitions(path, q string) []workspace.Symbol {
	lang := languageOf(strings.ToLower(filepath.Ext(path)))
	if lang == nil {
		return nil
	}
	pats := lang.patterns()
	data, err := os.ReadFile(path)
	if err != nil || len(data) > MaxFileBytes || isBinary(data) {
		return nil
	}
	lq := strings.ToLower(q)
	var out []workspace.Symbol
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(strings.ToLower(line), lq) {
			continue
		}
		for _, p := range pats {
			m := p.re.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			name := m[p.re.SubexpIndex("name")]
			if notName(name) || !strings.Contains(strings.ToLower(name), lq) {
				continue
			}
			s := workspace.Symbol{Name: name, Kind: p.kind, Path: path, Line: i + 1}
			if ci := p.re.SubexpIndex("container"); ci > 0 {
				s.Container = m[ci]
			}
			out = append(out, s)
			break
		}
	}
	return out
}
