package tools

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The queries docs/benchmarks.md reports, run against $(go env GOROOT)/src by both agentd's
// searcher and ripgrep in the same benchmark run (bench/search_vs_rg.sh prints the ratio).
var benchQueries = []struct {
	name, pattern string
	literal       bool
}{
	{"literal", "context.Context", true},
	{"regexp", `func \w+\(ctx context\.Context`, false},
	{"casefold", `(?i)deadline exceeded`, false},
}

func goroot(tb testing.TB) string {
	root := runtime.GOROOT()
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		root = strings.TrimSpace(string(out))
	}
	src := filepath.Join(root, "src")
	if _, err := os.Stat(src); err != nil {
		tb.Skipf("GOROOT/src not found: %v", err)
	}
	return src
}

func BenchmarkSearchGOROOT(b *testing.B) {
	src := goroot(b)
	rg, rgErr := exec.LookPath("rg")
	for _, q := range benchQueries {
		m, err := compileMatcher(q.pattern, q.literal, false)
		if err != nil {
			b.Fatal(err)
		}
		var matches int
		b.Run("agentd/"+q.name, func(b *testing.B) {
			for b.Loop() {
				out, err := search(context.Background(), searchOpts{Root: src, Start: src, Matcher: m, MaxPerFile: 50, MaxKept: 100})
				if err != nil {
					b.Fatal(err)
				}
				matches = out.TotalMatches
			}
			b.ReportMetric(float64(matches), "lines")
		})
		b.Run("rg/"+q.name, func(b *testing.B) {
			if rgErr != nil {
				b.Skip("ripgrep (rg) is not installed: apt-get install ripgrep")
			}
			args := []string{"--no-config", "--hidden", "--no-require-git", "-c", "--no-messages"}
			if q.literal {
				args = append(args, "-F")
			}
			args = append(args, "--", q.pattern, src)
			var total int
			for b.Loop() {
				out, _ := exec.Command(rg, args...).Output()
				total = 0
				for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
					if i := bytes.LastIndexByte(line, ':'); i >= 0 {
						n, _ := strconv.Atoi(string(line[i+1:]))
						total += n
					}
				}
			}
			b.ReportMetric(float64(total), "lines")
		})
	}
}

// BenchmarkSearchVsRipgrep alternates agentd and ripgrep within each iteration, so both see the
// same machine load (the build VM is shared), and reports each one's wall time and the ratio.
func BenchmarkSearchVsRipgrep(b *testing.B) {
	src := goroot(b)
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Skip("ripgrep (rg) is not installed: apt-get install ripgrep")
	}
	for _, q := range benchQueries {
		m, err := compileMatcher(q.pattern, q.literal, false)
		if err != nil {
			b.Fatal(err)
		}
		args := []string{"--no-config", "--hidden", "--no-require-git", "-c", "--no-messages"}
		if q.literal {
			args = append(args, "-F")
		}
		args = append(args, "--", q.pattern, src)
		b.Run(q.name, func(b *testing.B) {
			var ours, theirs time.Duration
			var oursLines, rgLines int
			for b.Loop() {
				t0 := time.Now()
				out, err := search(context.Background(), searchOpts{Root: src, Start: src, Matcher: m, MaxPerFile: 50, MaxKept: 100})
				if err != nil {
					b.Fatal(err)
				}
				ours += time.Since(t0)
				oursLines = out.TotalMatches
				t0 = time.Now()
				rgOut, _ := exec.Command(rg, args...).Output()
				theirs += time.Since(t0)
				rgLines = 0
				for _, line := range bytes.Split(bytes.TrimSpace(rgOut), []byte("\n")) {
					if i := bytes.LastIndexByte(line, ':'); i >= 0 {
						n, _ := strconv.Atoi(string(line[i+1:]))
						rgLines += n
					}
				}
			}
			if oursLines != rgLines {
				b.Fatalf("agentd found %d lines, ripgrep %d", oursLines, rgLines)
			}
			b.ReportMetric(float64(ours.Milliseconds())/float64(b.N), "agentd-ms")
			b.ReportMetric(float64(theirs.Milliseconds())/float64(b.N), "rg-ms")
			b.ReportMetric(float64(ours)/float64(theirs), "ratio")
			b.ReportMetric(float64(oursLines), "lines")
		})
	}
}
