package tools

import "testing"

// TestIgnorePatternMatch carries go-git's own pattern cases (plumbing/format/gitignore,
// pattern_test.go), whose semantics the walks kept when the matcher moved here: negation,
// directory-only patterns, anchored patterns and "**", and patterns from a nested ignore file
// (a domain) that apply only below it.
func TestIgnorePatternMatch(t *testing.T) {
	cases := []struct {
		pattern string
		domain  []string
		path    []string
		isDir   bool
		want    ignoreResult
		name    string
	}{
		{"!vul?ano", nil, []string{"value", "vulkano", "tail"}, false, ignoreInclude, "TestSimpleMatch_inclusion"},
		{"value", []string{"head", "middle", "tail"}, []string{"head", "middle"}, false, ignoreNoMatch, "TestMatch_domainLonger_mismatch"},
		{"value", []string{"head", "middle", "tail"}, []string{"head", "middle", "tail"}, false, ignoreNoMatch, "TestMatch_domainSameLength_mismatch"},
		{"value", []string{"head", "middle", "tail"}, []string{"head", "middle", "_tail_", "value"}, false, ignoreNoMatch, "TestMatch_domainMismatch_mismatch"},
		{"middle/", []string{"value", "volcano"}, []string{"value", "volcano", "middle", "tail"}, false, ignoreExclude, "TestSimpleMatch_withDomain"},
		{"volcano/", []string{"value", "volcano"}, []string{"value", "volcano", "tail"}, true, ignoreNoMatch, "TestSimpleMatch_onlyMatchInDomain_mismatch"},
		{"value", nil, []string{"value", "tail"}, false, ignoreExclude, "TestSimpleMatch_atStart"},
		{"value", nil, []string{"head", "value", "tail"}, false, ignoreExclude, "TestSimpleMatch_inTheMiddle"},
		{"value", nil, []string{"head", "value"}, false, ignoreExclude, "TestSimpleMatch_atEnd"},
		{"value/", nil, []string{"value", "tail"}, false, ignoreExclude, "TestSimpleMatch_atStart_dirWanted"},
		{"value/", nil, []string{"head", "value", "tail"}, false, ignoreExclude, "TestSimpleMatch_inTheMiddle_dirWanted"},
		{"value/", nil, []string{"head", "value"}, true, ignoreExclude, "TestSimpleMatch_atEnd_dirWanted"},
		{"value/", nil, []string{"head", "value"}, false, ignoreNoMatch, "TestSimpleMatch_atEnd_dirWanted_notADir_mismatch"},
		{"value", nil, []string{"head", "val", "tail"}, false, ignoreNoMatch, "TestSimpleMatch_mismatch"},
		{"val", nil, []string{"head", "value", "tail"}, false, ignoreNoMatch, "TestSimpleMatch_valueLonger_mismatch"},
		{"v*o", nil, []string{"value", "vulkano", "tail"}, false, ignoreExclude, "TestSimpleMatch_withAsterisk"},
		{"vul?ano", nil, []string{"value", "vulkano", "tail"}, false, ignoreExclude, "TestSimpleMatch_withQuestionMark"},
		{"v[ou]l[kc]ano", nil, []string{"value", "volcano"}, false, ignoreExclude, "TestSimpleMatch_magicChars"},
		{"v[ou]l[", nil, []string{"value", "vol["}, false, ignoreNoMatch, "TestSimpleMatch_wrongPattern_mismatch"},
		{"/value/vul?ano", nil, []string{"value", "vulkano", "tail"}, false, ignoreExclude, "TestGlobMatch_fromRootWithSlash"},
		{"middle/tail/", []string{"value", "volcano"}, []string{"value", "volcano", "middle", "tail"}, true, ignoreExclude, "TestGlobMatch_withDomain"},
		{"volcano/tail", []string{"value", "volcano"}, []string{"value", "volcano", "tail"}, false, ignoreNoMatch, "TestGlobMatch_onlyMatchInDomain_mismatch"},
		{"value/vul?ano", nil, []string{"value", "vulkano", "tail"}, false, ignoreExclude, "TestGlobMatch_fromRootWithoutSlash"},
		{"value/vulkano", nil, []string{"value", "volcano"}, false, ignoreNoMatch, "TestGlobMatch_fromRoot_mismatch"},
		{"value/vul?ano", nil, []string{"value"}, false, ignoreNoMatch, "TestGlobMatch_fromRoot_tooShort_mismatch"},
		{"/value/volcano", nil, []string{"value", "value", "volcano"}, false, ignoreNoMatch, "TestGlobMatch_fromRoot_notAtRoot_mismatch"},
		{"**/*lue/vol?ano", nil, []string{"value", "volcano", "tail"}, false, ignoreExclude, "TestGlobMatch_leadingAsterisks_atStart"},
		{"**/*lue/vol?ano", nil, []string{"head", "value", "volcano", "tail"}, false, ignoreExclude, "TestGlobMatch_leadingAsterisks_notAtStart"},
		{"**/*lue/vol?ano", nil, []string{"head", "value", "Volcano", "tail"}, false, ignoreNoMatch, "TestGlobMatch_leadingAsterisks_mismatch"},
		{"**/*lue/vol?ano/", nil, []string{"head", "value", "volcano", "tail"}, false, ignoreExclude, "TestGlobMatch_leadingAsterisks_isDir"},
		{"**/*lue/vol?ano/", nil, []string{"head", "value", "volcano"}, true, ignoreExclude, "TestGlobMatch_leadingAsterisks_isDirAtEnd"},
		{"**/*lue/vol?ano/", nil, []string{"head", "value", "Colcano"}, true, ignoreNoMatch, "TestGlobMatch_leadingAsterisks_isDir_mismatch"},
		{"**/*lue/vol?ano/", nil, []string{"head", "value", "volcano"}, false, ignoreNoMatch, "TestGlobMatch_leadingAsterisks_isDirNoDirAtEnd_mismatch"},
		{"/*lue/vol?ano/**", nil, []string{"value", "volcano", "tail", "moretail"}, false, ignoreExclude, "TestGlobMatch_tailingAsterisks"},
		{"/*lue/vol?ano/**", nil, []string{"value", "volcano"}, false, ignoreExclude, "TestGlobMatch_tailingAsterisks_exactMatch"},
		{"/*lue/**/vol?ano", nil, []string{"value", "volcano"}, false, ignoreExclude, "TestGlobMatch_middleAsterisks_emptyMatch"},
		{"/*lue/**/vol?ano", nil, []string{"value", "middle", "volcano"}, false, ignoreExclude, "TestGlobMatch_middleAsterisks_oneMatch"},
		{"/*lue/**/vol?ano", nil, []string{"value", "middle1", "middle2", "volcano"}, false, ignoreExclude, "TestGlobMatch_middleAsterisks_multiMatch"},
		{"/*lue/**/vol?ano/", nil, []string{"value", "middle1", "middle2", "volcano"}, true, ignoreExclude, "TestGlobMatch_middleAsterisks_isDir_trailing"},
		{"/*lue/**/vol?ano/", nil, []string{"value", "middle1", "middle2", "volcano"}, false, ignoreNoMatch, "TestGlobMatch_middleAsterisks_isDir_trailing_mismatch"},
		{"/*lue/**/vol?ano/", nil, []string{"value", "middle1", "middle2", "volcano", "tail"}, false, ignoreExclude, "TestGlobMatch_middleAsterisks_isDir"},
		{"/*lue/**foo/vol?ano", nil, []string{"value", "foo", "volcano", "tail"}, false, ignoreNoMatch, "TestGlobMatch_wrongDoubleAsterisk_mismatch"},
		{"**/head/v[ou]l[kc]ano", nil, []string{"value", "head", "volcano"}, false, ignoreExclude, "TestGlobMatch_magicChars"},
		{"**/head/v[ou]l[", nil, []string{"value", "head", "vol["}, false, ignoreNoMatch, "TestGlobMatch_wrongPattern_noTraversal_mismatch"},
		{"/value/**/v[ou]l[", nil, []string{"value", "head", "vol["}, false, ignoreNoMatch, "TestGlobMatch_wrongPattern_onTraversal_mismatch"},
		{"**/android/**/GeneratedPluginRegistrant.java", nil, []string{"packages", "flutter_tools", "lib", "src", "android", "gradle.dart"}, false, ignoreNoMatch, "TestGlobMatch_issue_923"},
	}
	for _, c := range cases {
		p := parseIgnorePattern(c.pattern, c.domain)
		if got := p.match(c.path, c.isDir); got != c.want {
			t.Errorf("%s: %q in %q matching %q (dir %v) = %d, want %d", c.name, c.pattern, c.domain, c.path, c.isDir, got, c.want)
		}
	}
}
