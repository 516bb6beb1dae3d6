// Package docs holds no code: its test keeps docs/security.md honest. Every claim on that page
// names the test that checks it, and a renamed or deleted test must fail here rather than leave
// the page citing nothing.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cited matches `pkg/path: TestName` as the page writes a test.
var cited = regexp.MustCompile("`([a-z0-9_./-]+): (Test[A-Za-z0-9_]+)`")

func TestSecurityPageCitesExistingTests(t *testing.T) {
	page, err := os.ReadFile("security.md")
	if err != nil {
		t.Fatal(err)
	}
	ms := cited.FindAllStringSubmatch(string(page), -1)
	if len(ms) < 40 {
		t.Fatalf("security.md cites %d tests; the pattern no longer matches the page", len(ms))
	}
	defs := map[string]string{} // package dir -> its test files' text
	for _, m := range ms {
		pkg, name := m[1], m[2]
		if pkg == "package" {
			continue // the page's own example of the form
		}
		src, ok := defs[pkg]
		if !ok {
			files, _ := filepath.Glob(filepath.Join("..", filepath.FromSlash(pkg), "*_test.go"))
			var b strings.Builder
			for _, f := range files {
				text, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(text)
			}
			src = b.String()
			defs[pkg] = src
		}
		if !regexp.MustCompile(`(?m)^func ` + name + `\(t \*testing\.T\)`).MatchString(src) {
			t.Errorf("security.md cites %s: %s, which does not exist", pkg, name)
		}
	}
}
