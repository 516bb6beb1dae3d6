package tools

import "testing"

// The patterns compile on first use, so a bad one would panic only when a model first reached
// it; compile them all here.
func TestLazyPatternsCompile(t *testing.T) {
	for _, ext := range []string{".go", ".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".rs",
		".java", ".kt", ".kts", ".cs", ".scala", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".m", ".mm", ".rb", ".php"} {
		pats := languageOf(ext).patterns()
		if len(pats) == 0 {
			t.Errorf("%s: no definition patterns", ext)
		}
		for _, p := range pats {
			if p.kind == "" || p.re.SubexpIndex("name") < 0 {
				t.Errorf("%s: pattern %s has no kind or no name group", ext, p.re)
			}
		}
	}
}
