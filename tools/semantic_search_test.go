package tools

import (
	"context"
	"errors"
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
