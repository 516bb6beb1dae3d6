// Command testsummary reads `go test -json` on stdin and prints one line per package with how
// many tests passed, failed and were skipped, the names of the skipped ones, and the output of
// every failed test or package. scripts/test.sh runs it so that a suite that quietly skips
// (missing fixtures, a missing tool) shows up in the summary. It exits 1 when anything failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

type pkg struct {
	passed, failed int
	skipped        []string
	result         string // pass | fail | skip (no test files)
	output         map[string][]string
	failedTests    []string
	buildOutput    []string
}

func main() {
	failed, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsummary:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func summarize(r io.Reader, w io.Writer) (failed bool, err error) {
	pkgs := map[string]*pkg{}
	var order []string
	get := func(name string) *pkg {
		p := pkgs[name]
		if p == nil {
			p = &pkg{output: map[string][]string{}}
			pkgs[name] = p
			order = append(order, name)
		}
		return p
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Package == "" {
			// Not an event (a build error printed before the package's events): keep it.
			fmt.Fprintln(w, string(line))
			continue
		}
		p := get(e.Package)
		switch e.Action {
		case "build-output":
			p.buildOutput = append(p.buildOutput, e.Output)
		case "output":
			p.output[e.Test] = append(p.output[e.Test], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				p.result = e.Action
				continue
			}
			if strings.Contains(e.Test, "/") {
				continue // subtests count with their parent
			}
			switch e.Action {
			case "pass":
				p.passed++
			case "fail":
				p.failed++
				p.failedTests = append(p.failedTests, e.Test)
			case "skip":
				p.skipped = append(p.skipped, e.Test)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	slices.Sort(order)
	totalSkipped := 0
	for _, name := range order {
		p := pkgs[name]
		if p.result == "skip" && p.passed+p.failed+len(p.skipped) == 0 {
			continue // no test files
		}
		status := "ok  "
		if p.result == "fail" || p.failed > 0 {
			status, failed = "FAIL", true
		}
		fmt.Fprintf(w, "%s %s: %d passed, %d failed, %d skipped", status, name, p.passed, p.failed, len(p.skipped))
		if len(p.skipped) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(p.skipped, ", "))
		}
		fmt.Fprintln(w)
		totalSkipped += len(p.skipped)
		if status == "FAIL" {
			for _, l := range p.buildOutput {
				fmt.Fprint(w, "    ", l)
			}
			for _, tn := range p.failedTests {
				for _, l := range p.output[tn] {
					fmt.Fprint(w, "    ", l)
				}
			}
			if len(p.failedTests) == 0 {
				for _, l := range p.output[""] {
					fmt.Fprint(w, "    ", l)
				}
			}
		}
	}
	fmt.Fprintf(w, "skipped tests in all: %d\n", totalSkipped)
	return failed, nil
}
