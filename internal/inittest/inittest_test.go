// Package inittest holds agentd's start-up to what it can afford: every package's init runs at
// every start of the daemon, before the editor gets its initialize answer.
package inittest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"
)

// maxInitRegexpInsts bounds the compiled size of a regexp compiled at package init. A counted
// repetition unrolls: `[A-Za-z0-9_-]{1,64}` is 60 KB and 860 allocations at every start, which
// three packages paid before this test (workspace, session, session/internal/texttools). Compile
// such a pattern at first use (sync.OnceValue) or check the length in code.
const maxInitRegexpInsts = 100

// TestNoLargeRegexpAtInit finds every package-level regexp.MustCompile of a constant pattern in
// the module's non-test Go files and fails on one whose compiled program is over the bound.
func TestNoLargeRegexpAtInit(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
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
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, v := range spec.(*ast.ValueSpec).Values {
					pattern, ok := mustCompileArg(v)
					if !ok {
						continue
					}
					checked++
					if n := insts(t, pattern); n > maxInitRegexpInsts {
						rel, _ := filepath.Rel(root, path)
						t.Errorf("%s: the package-level regexp %q compiles to %d instructions at every start (bound %d): compile it at first use or check the length in code", rel, pattern, n, maxInitRegexpInsts)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no package-level regexp found: the walk is broken")
	}
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

func insts(t *testing.T, pattern string) int {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		t.Fatalf("%q: %v", pattern, err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		t.Fatalf("%q: %v", pattern, err)
	}
	return len(prog.Inst)
}
