// Package inittest holds agentd's start-up to what it can afford: every package's init runs at
// every start of the daemon, before the editor gets its initialize answer.
package inittest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/internal/test/testbin"
)

// Bounds on the binary's package inits, read from GODEBUG=inittrace=1 (allocation counts and
// bytes are the same from run to run; times are not, and are not checked). They are a guard
// against heavy work at every start (a table of thousands of entries built at init, a file read,
// a dependency with a heavy init), not against ordinary package-level values: a package-level
// regexp.MustCompile or sync.OnceValue is idiomatic Go and fits well inside them. Measured
// 2026-12-02 (issue 27, the start-up tricks undone: package-level regexps and values as plain Go,
// golang.org/x/net/html in place of its copy): agentd's own packages 1,153 allocations and 130 KB
// (tools' and session's patterns most of it), the whole binary 104 inits, 2,142 allocations and
// 433 KB (x/net/html's entity map 126 KB of them). A new bound above these says in
// docs/benchmarks.md why the work must be paid at every start.
const (
	maxOwnInitAllocs = 3000
	maxOwnInitBytes  = 384 << 10
	maxInits         = 160
	maxInitAllocs    = 5000
	maxInitBytes     = 1 << 20
)

// notLinked are module paths (prefixes) the daemon must not link at all, with why; a test may.
var notLinked = map[string]string{
	// (The official MCP SDK was listed here while mcp/internal/client stood in for it; since
	// issue 29 it is the production client again.)
}

// TestNotLinked lists the daemon's dependencies and fails on each package of notLinked.
func TestNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../../../cmd/agentd").Output()
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
		t.Errorf("agentd's own package inits make %d allocations and %d bytes at every start (bounds %d, %d): build it at first use (sync.OnceValue) if it is heavy%s",
			own.allocs, own.bytes, maxOwnInitAllocs, maxOwnInitBytes, report("github.com/agentd-dev/agentd/"))
	}
	if len(inits) > maxInits || all.allocs > maxInitAllocs || all.bytes > maxInitBytes {
		t.Errorf("the binary runs %d package inits making %d allocations and %d bytes at every start (bounds %d, %d, %d): a new dependency's init?%s",
			len(inits), all.allocs, all.bytes, maxInits, maxInitAllocs, maxInitBytes, report(""))
	}
}

func ownPackage(pkg string) bool {
	return pkg == "main" || strings.HasPrefix(pkg, "github.com/agentd-dev/agentd/")
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
