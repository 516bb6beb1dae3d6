// Package inittest holds agentd's start-up to what it can afford: every package's init runs at
// every start of the daemon, before the editor gets its initialize answer.
package inittest

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/internal/testbin"
)

// TestNoRegexpAtInit finds every package-level regexp.MustCompile of a constant pattern in the
// module's non-test Go files and fails on each: compile it at first use (sync.OnceValue). A
// counted repetition unrolls (`[A-Za-z0-9_-]{1,64}` was 60 KB and 860 allocations at every
// start, which three packages paid), and even small patterns add up: session's four
// closing-tag patterns were 150 allocations and 17 KB of its init.
func TestNoRegexpAtInit(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		for _, pattern := range initRegexps(t, rel, src) {
			t.Errorf("%s: the package-level regexp %q is compiled at every start: compile it at first use (sync.OnceValue)", rel, pattern)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files: the walk is broken", files)
	}
	// The matcher itself: a package-level call is found, the lazy form is not.
	src := "package p\nimport (\"regexp\"; \"sync\")\nvar a = regexp.MustCompile(`x+`)\nvar b = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`y`) })\n"
	if got := initRegexps(t, "self.go", []byte(src)); len(got) != 1 || got[0] != "x+" {
		t.Fatalf("initRegexps(self) = %q, want [x+]", got)
	}
}

// initRegexps are the patterns of the package-level regexp.MustCompile calls in src.
func initRegexps(t *testing.T, name string, src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, spec := range gd.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if pattern, ok := mustCompileArg(v); ok {
					out = append(out, pattern)
				}
			}
		}
	}
	return out
}

// mustCompileArg is the pattern of regexp.MustCompile("…") (a call at package level: a
// sync.OnceValue wrapping one is a function literal, not a call, and is not matched).
func mustCompileArg(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "MustCompile" {
		return "", false
	}
	if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "regexp" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// Bounds on the binary's package inits, read from GODEBUG=inittrace=1 (allocation counts and
// bytes are the same from run to run; times are not, and are not checked). Measured 2026-12-01
// with go1.26 at 3ab545c: agentd's own packages 344 allocations and 30 KB (tools 241 of them:
// one sync.OnceValue per tool schema and lazy pattern), the whole binary 122 inits, 1,934
// allocations and 384 KB (at 02c9ed6, before the third start-up pass: 657 and 63 KB; 132, 2,822
// and 465 KB). The bounds leave room for growth but not for a table built at init or a
// dependency with a heavy init: make such a thing lazy, or say in docs/benchmarks.md why it must
// be paid at every start and raise the bound. At the fourth pass (2026-12-01, x/net/html's
// entity table made lazy in a copy): 122 inits, 1,926 allocations, 271 KB. At the idle-RSS pass
// (2026-12-02, agentd's inits made static: TestOwnInitsDoNothing): agentd's packages 14
// allocations and 4.1 KB; the whole binary (the MCP SDK and go.lsp.dev/jsonrpc2 gone too) 99 inits,
// 957 allocations and 184 KB.
const (
	maxOwnInitAllocs = 30
	maxOwnInitBytes  = 8 << 10
	maxInits         = 130
	maxInitAllocs    = 2200
	maxInitBytes     = 300 << 10
)

// unlinked are packages whose init is too dear for every start, with what does their job.
var unlinked = map[string]string{
	"golang.org/x/net/html": "its init builds a 2,231-entry entity map (126 KB); tools/web/internal/html is a copy that builds it at first use",
}

// notLinked are module paths (prefixes) the daemon must not link at all, with why; a test may.
var notLinked = map[string]string{
	// (The official MCP SDK was listed here while mcp/internal/client stood in for it; since
	// issue 29 it is the production client again.)
}

// TestNotLinked lists the daemon's dependencies and fails on each package of notLinked.
func TestNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../cmd/agentd").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 100 || !slices.Contains(deps, "github.com/agentd-dev/agentd/mcp") {
		t.Fatalf("go list -deps gave %d packages, without agentd's mcp: the listing is broken", len(deps))
	}
	for _, dep := range deps {
		for prefix, why := range notLinked {
			if dep == prefix || strings.HasPrefix(dep, prefix+"/") {
				t.Errorf("cmd/agentd links %s: %s", dep, why)
			}
		}
	}
}

// TestInitCost runs the static binary's --version with inittrace and holds agentd's own
// packages and the whole binary to the bounds above.
func TestInitCost(t *testing.T) {
	inits := traceInits(t)
	var own, all initCost
	for _, c := range inits {
		if why, ok := unlinked[c.pkg]; ok {
			t.Errorf("%s is linked again: %s", c.pkg, why)
		}
		all.add(c)
		if ownPackage(c.pkg) {
			own.add(c)
		}
	}
	t.Logf("agentd's packages: %d allocations, %d bytes; all %d inits: %d allocations, %d bytes", own.allocs, own.bytes, len(inits), all.allocs, all.bytes)
	report := func(prefix string) string {
		sort.Slice(inits, func(i, j int) bool { return inits[i].allocs > inits[j].allocs })
		var b strings.Builder
		for _, c := range inits {
			if strings.HasPrefix(c.pkg, prefix) && b.Len() < 2000 {
				fmt.Fprintf(&b, "\n  %s: %d allocations, %d bytes", c.pkg, c.allocs, c.bytes)
			}
		}
		return b.String()
	}
	if own.allocs > maxOwnInitAllocs || own.bytes > maxOwnInitBytes {
		t.Errorf("agentd's own package inits make %d allocations and %d bytes at every start (bounds %d, %d): make what they build lazy%s",
			own.allocs, own.bytes, maxOwnInitAllocs, maxOwnInitBytes, report("github.com/agentd-dev/agentd/"))
	}
	if len(inits) > maxInits || all.allocs > maxInitAllocs || all.bytes > maxInitBytes {
		t.Errorf("the binary runs %d package inits making %d allocations and %d bytes at every start (bounds %d, %d, %d): a new dependency's init?%s",
			len(inits), all.allocs, all.bytes, maxInits, maxInitAllocs, maxInitBytes, report(""))
	}
}

// ownInits are the agentd packages whose init may run at all, each with why and the most
// allocations it may make. Every other package of the module has no init work: no map literal,
// no package-level sync.OnceValue or regexp, no value built by a call (a lazy value behind a
// zero sync.Once, a switch or a composite literal the compiler lays out does the job). An init
// costs more than its allocations: it runs code in its package's part of the binary, a 64 KB
// window of it made resident at every start (before the idle-RSS pass, 15 of agentd's packages
// had an init, and of most of them the daemon ran no other code before its first turn).
var ownInits = map[string]struct {
	why       string
	maxAllocs int
}{
	"github.com/agentd-dev/agentd/cmd/agentd/internal/stack": {"grows the main goroutine's stack before the other inits (TestStackGrownFirst)", 0},
	"github.com/agentd-dev/agentd/cmd/agentd/internal/early": {"the one-P policy, before the heavier inits (TestOnePBeforeHeavyInits); os.Getenv copies the environment", 12},
}

func ownPackage(pkg string) bool {
	return pkg == "main" || strings.HasPrefix(pkg, "github.com/agentd-dev/agentd/")
}

// TestOwnInitsDoNothing fails on an init of agentd's own packages that does work again: one
// not in ownInits (the trace lists every package with an init function, whatever it does), or
// one that allocates more than its bound.
func TestOwnInitsDoNothing(t *testing.T) {
	inits := traceInits(t)
	for _, c := range inits {
		if !ownPackage(c.pkg) {
			continue
		}
		allowed, ok := ownInits[c.pkg]
		switch {
		case !ok:
			t.Errorf("%s has an init (%d allocations, %d bytes) that runs at every start: make what it builds lazy (a zero sync.Once beside the value) or static (a switch, an array, a composite literal of constants)", c.pkg, c.allocs, c.bytes)
		case c.allocs > allowed.maxAllocs:
			t.Errorf("%s's init makes %d allocations, at most %d expected (it may run only because %s)", c.pkg, c.allocs, allowed.maxAllocs, allowed.why)
		}
	}
}

// TestOnePBeforeHeavyInits holds cmd/agentd/internal/early's init (the one-P policy) ahead of
// the dependencies whose inits allocate the most: lowering GOMAXPROCS after them costs a fresh
// page per size class their allocations left cached on the second P (50 to 90 page faults at
// every start when it was done in main).
func TestOnePBeforeHeavyInits(t *testing.T) {
	inits := traceInits(t)
	at := map[string]int{}
	for i, c := range inits {
		at[c.pkg] = i
	}
	early, ok := at["github.com/agentd-dev/agentd/cmd/agentd/internal/early"]
	if !ok {
		t.Fatal("cmd/agentd/internal/early's init does not run: the one-P policy is not applied")
	}
	for _, heavy := range []string{"encoding/gob", "go.yaml.in/yaml/v3", "github.com/google/jsonschema-go/jsonschema"} {
		if i, ok := at[heavy]; ok && i < early {
			t.Errorf("%s's init (#%d) runs before the one-P policy's (#%d)", heavy, i, early)
		}
	}
}

// TestStackGrownFirst holds cmd/agentd/internal/stack's init (the main goroutine's stack grown to
// 32 KB) ahead of every init that goes deep enough to grow a small stack: internal/godebug's
// (its settings map), net/netip's (unique handles) and the heavier ones after them. Each growth
// it saves copied the stack and looked up every frame's stack maps in the binary's pclntab.
func TestStackGrownFirst(t *testing.T) {
	inits := traceInits(t)
	at := map[string]int{}
	for i, c := range inits {
		at[c.pkg] = i
	}
	stack, ok := at["github.com/agentd-dev/agentd/cmd/agentd/internal/stack"]
	if !ok {
		t.Fatal("cmd/agentd/internal/stack's init does not run: the package inits run on the runtime's smallest stack")
	}
	for _, deep := range []string{"internal/godebug", "net/netip", "encoding/json", "reflect"} {
		if i, ok := at[deep]; ok && i < stack {
			t.Errorf("%s's init (#%d) runs before the stack is grown (#%d)", deep, i, stack)
		}
	}
}

type initCost struct {
	pkg           string
	bytes, allocs int
}

func (c *initCost) add(o initCost) { c.bytes += o.bytes; c.allocs += o.allocs }

// inittraceLine is one line of GODEBUG=inittrace=1: "init PKG @T ms, D ms clock, B bytes, A allocs".
var inittraceLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

func parseInittrace(out []byte) ([]initCost, error) {
	var inits []initCost
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		m := inittraceLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("an inittrace line this test does not read: %q", line)
		}
		b, _ := strconv.Atoi(m[2])
		a, _ := strconv.Atoi(m[3])
		inits = append(inits, initCost{m[1], b, a})
	}
	if len(inits) < 50 {
		return nil, fmt.Errorf("only %d init lines in the trace:\n%s", len(inits), out)
	}
	return inits, nil
}

// traceInits runs the static binary's --version with inittrace and returns its package inits in
// the order they ran.
func traceInits(t *testing.T) []initCost {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, stderr.Bytes())
	}
	inits, err := parseInittrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return inits
}
