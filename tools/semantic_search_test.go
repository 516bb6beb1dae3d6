package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func init() { contract["semantic_search"] = EffectRead }

type fakeSemantic struct {
	res   SemanticResult
	err   error
	query string
	max   int
}

func (f *fakeSemantic) Search(ctx context.Context, query string, max int) (SemanticResult, error) {
	f.query, f.max = query, max
	return f.res, f.err
}

func TestSemanticSearch(t *testing.T) {
	h := newHarness(t, map[string]string{"auth/login.go": "package auth\n\nfunc Login() {\n\t// check the password\n}\n"})
	mustErr(t, h.run("semantic_search", map[string]any{"query": "password"}), "no embedding model")

	f := &fakeSemantic{res: SemanticResult{Files: 3, Pending: 2, Hits: []SemanticHit{{Path: h.path("auth/login.go"), StartLine: 3, EndLine: 5, Score: 0.83}}}}
	h.env.Semantic = f
	r := mustOK(t, h.run("semantic_search", map[string]any{"query": "  where is the password checked ", "max_results": 3}))
	mustContain(t, r.Output, "still being built (3 files indexed, 2 to go)", "auth/login.go:3-5 (score 0.83)", "3\tfunc Login() {\n4\t\t// check the password\n5\t}")
	if f.query != "where is the password checked" || f.max != 3 {
		t.Fatalf("searched %q max %d", f.query, f.max)
	}
	if len(r.Locations) != 1 || r.Locations[0].Line != 3 {
		t.Fatalf("locations %+v", r.Locations)
	}
	f.res = SemanticResult{}
	mustOK(t, h.run("semantic_search", map[string]any{"query": "x"}))
	f.err = errors.New("rate limited")
	mustErr(t, h.run("semantic_search", map[string]any{"query": "x"}), "rate limited", "search_text")
	mustErr(t, h.run("semantic_search", map[string]any{"query": " "}), "query is empty")
	mustErr(t, h.run("semantic_search", map[string]any{"query": "x", "max_results": 500}), "max_results")
	if len(h.asked) != 0 {
		t.Fatal("a read tool asked")
	}
}

// Issue 26 item 1: a hit whose file became a link out of the roots after it was indexed (here
// to a secret outside, and to /proc/self/environ) is not re-read through the link; the hit
// says it was refused. A hit swapped for a link inside the roots still shows its lines.
func TestSemanticSearchHitSwappedForLinkOut(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "one\n", "b.go": "two\n", "inside.go": "1\n2\nINSIDE\n"})
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("line1\nTOPSECRET-SEM\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"a.go": secret, "b.go": "/proc/self/environ", "c.go": "inside.go"} {
		os.Remove(h.path(name))
		if err := os.Symlink(target, h.path(name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("AGENTD_SEM_PROBE", "ENVSECRET-SEM")
	h.env.Semantic = &fakeSemantic{res: SemanticResult{Files: 2, Hits: []SemanticHit{
		{Path: h.path("a.go"), StartLine: 1, EndLine: 2, Score: 0.9},
		{Path: h.path("b.go"), StartLine: 1, EndLine: 400, Score: 0.8},
		{Path: h.path("c.go"), StartLine: 3, EndLine: 3, Score: 0.7},
	}}}
	r := mustOK(t, h.run("semantic_search", map[string]any{"query": "secret"}))
	for _, leak := range []string{"TOPSECRET-SEM", "ENVSECRET-SEM", "PATH="} {
		if strings.Contains(r.Output, leak) {
			t.Fatalf("a hit was re-read through a link out of the roots (%s):\n%s", leak, r.Output)
		}
	}
	mustContain(t, r.Output, "a.go:1-2", "not shown", "3\tINSIDE")
}
