package main

import (
	"strings"
	"testing"
)

func TestSummarizeCountsSkipsAndShowsFailures(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestOK"}`,
		`{"Action":"output","Package":"m/a","Test":"TestFixtures","Output":"    skipping: no fixtures\n"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestFixtures"}`,
		`{"Action":"skip","Package":"m/a","Test":"TestFixtures/sub"}`,
		`{"Action":"pass","Package":"m/a"}`,
		`{"Action":"output","Package":"m/b","Test":"TestBad","Output":"    b_test.go:3: boom\n"}`,
		`{"Action":"fail","Package":"m/b","Test":"TestBad"}`,
		`{"Action":"fail","Package":"m/b"}`,
		`{"Action":"skip","Package":"m/c"}`,
	}, "\n")
	var out strings.Builder
	failed, err := summarize(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("failed = %v, err = %v", failed, err)
	}
	got := out.String()
	for _, want := range []string{
		"ok   m/a: 1 passed, 0 failed, 1 skipped (TestFixtures)\n",
		"FAIL m/b: 0 passed, 1 failed, 0 skipped\n",
		"b_test.go:3: boom",
		"skipped tests in all: 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "m/c") {
		t.Errorf("a package without tests is listed:\n%s", got)
	}
}
