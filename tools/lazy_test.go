package tools

import (
	"regexp"
	"testing"
)

// The patterns compile on first use, so a bad one would panic only when a model first reached
// it; compile them all here.
func TestLazyPatternsCompile(t *testing.T) {
	for ext, lang := range defsByExt {
		pats := lang()
		if len(pats) == 0 {
			t.Errorf("%s: no definition patterns", ext)
		}
		for _, p := range pats {
			if p.kind == "" || p.re.SubexpIndex("name") < 0 {
				t.Errorf("%s: pattern %s has no kind or no name group", ext, p.re)
			}
		}
	}
	for _, re := range []func() *regexp.Regexp{goModulePath, goVersion, npmName, npmRange, npmKey, goLangVer, lineNumbered, gradleDep, tomlString} {
		if re() != re() {
			t.Errorf("%s compiled twice", re())
		}
	}
}
