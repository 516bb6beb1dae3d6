package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/workspace"
)

func TestGetDiagnostics(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n", "b.go": "package b\n"})
	h.ws.diags = []workspace.FileDiagnostics{
		{Path: h.path("b.go"), Diagnostics: []workspace.Diagnostic{{Line: 3, Column: 2, Severity: 2, Source: "vet", Message: "unused result"}}},
		{Path: h.path("a.go"), Diagnostics: []workspace.Diagnostic{
			{Line: 7, Column: 5, Severity: 1, Source: "compiler", Code: "UndeclaredName", Message: "undefined: x"},
			{Line: 1, Column: 1, Severity: 4, Message: "hint"},
		}},
	}
	r := mustOK(t, h.run("get_diagnostics", map[string]any{}))
	if !strings.HasPrefix(r.Output, "a.go:7:5: error: undefined: x [compiler UndeclaredName]\nb.go:3:2: warning: unused result [vet]\n[1 error, 1 warning]") {
		t.Fatalf("output:\n%s", r.Output)
	}
	r = mustOK(t, h.run("get_diagnostics", map[string]any{"path": "b.go", "min_severity": "error"}))
	mustContain(t, r.Output, "No problems of severity error or worse reported for b.go")
	r = mustOK(t, h.run("get_diagnostics", map[string]any{"path": "a.go", "min_severity": "hint"}))
	mustContain(t, r.Output, "a.go:1:1: hint: hint", "1 error, 1 hint")
	mustErr(t, h.run("get_diagnostics", map[string]any{"min_severity": "fatal"}), "field min_severity must be one of")
	mustErr(t, h.run("get_diagnostics", map[string]any{"path": "../x"}), "outside")

	h.ws.diags = nil
	mustErr(t, h.run("get_diagnostics", map[string]any{}), "does not report diagnostics")
}

func TestSettledDiagnostics(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	h.ws.diags = []workspace.FileDiagnostics{{Path: h.path("a.go"), Diagnostics: []workspace.Diagnostic{{Line: 2, Column: 1, Severity: 1, Message: "syntax error"}}}}
	got := settledDiagnostics(context.Background(), h.env, []string{h.path("a.go")}, time.Second, time.Millisecond)
	mustContain(t, got, "a.go:2:1: error: syntax error")
	h.ws.diags = nil
	if got := settledDiagnostics(context.Background(), h.env, []string{h.path("a.go")}, time.Second, time.Millisecond); got != "" {
		t.Fatalf("unsupported editor gave %q", got)
	}
}

func TestEditShowsWhatItBroke(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"})
	h.ws.diags = []workspace.FileDiagnostics{{Path: h.path("a.go"), Diagnostics: []workspace.Diagnostic{{Line: 1, Column: 9, Severity: 1, Message: "expected ';'"}}}}
	r := mustOK(t, h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a", "new_text": "package a b"}}}))
	if strings.Contains(r.Output, "expected") {
		t.Fatalf("diagnostics shown without DiagnosticsWait:\n%s", r.Output)
	}
	h.env.DiagnosticsWait = 200 * time.Millisecond
	r = mustOK(t, h.run("edit_file", map[string]any{"path": "a.go", "edits": []map[string]any{{"old_text": "package a b", "new_text": "package a c"}}}))
	mustContain(t, r.Output, "The editor now reports these errors in a.go:\na.go:1:9: error: expected ';'")
	h.ws.diags = []workspace.FileDiagnostics{{Path: h.path("a.go"), Diagnostics: []workspace.Diagnostic{{Line: 1, Column: 1, Severity: 2, Message: "just a warning"}}}}
	r = mustOK(t, h.run("create_file", map[string]any{"path": "a.go", "content": "package a\n", "overwrite": true}))
	if strings.Contains(r.Output, "reports") {
		t.Fatalf("a warning was reported as breakage:\n%s", r.Output)
	}
}
