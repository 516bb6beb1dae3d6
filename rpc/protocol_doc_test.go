package rpc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// wireNames returns the value of every string constant in protocol whose name starts with
// one of prefixes.
func wireNames(t *testing.T, prefixes ...string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "protocol", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no protocol sources: %v", err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					for _, p := range prefixes {
						if strings.HasPrefix(name.Name, p) {
							v, _ := strconv.Unquote(lit.Value)
							out[name.Name] = v
						}
					}
				}
			}
		}
	}
	return out
}

// Every method and every update kind of the wire types, and every method the server answers, is
// written in docs/protocol.md (in backticks or quotes), so the user-facing contract cannot fall
// behind the code.
func TestProtocolDocNamesEveryMethodAndUpdate(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	names := wireNames(t, "Method", "Update")
	if len(names) < 30 {
		t.Fatalf("found only %d method and update constants in protocol: %v", len(names), names)
	}
	s := NewServer(Options{})
	for m := range s.methods {
		names["method table: "+m] = m
	}
	for m := range s.notifs {
		names["notification table: "+m] = m
	}
	var missing []string
	for name, v := range names {
		if !strings.Contains(text, "`"+v+"`") && !strings.Contains(text, `"`+v+`"`) && !strings.Contains(text, "`"+v+" ") {
			missing = append(missing, name+" = "+strconv.Quote(v))
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/protocol.md does not name %s", m)
	}
}
