package tools

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/workspace"
)

type getDiagnosticsIn struct {
	Path        string `json:"path,omitempty" schema:"maxLength=4096"`
	MinSeverity string `json:"min_severity,omitempty" schema:"enum=error,enum=warning,enum=information,enum=hint"`
}

func (in getDiagnosticsIn) title() string {
	if in.Path == "" {
		return "Diagnostics"
	}
	return "Diagnostics of " + in.Path
}

// GetDiagnostics is the get_diagnostics tool.
var GetDiagnostics Tool = &typed[getDiagnosticsIn]{spec: Spec{Name: "get_diagnostics", Effect: EffectRead, Kind: "read", Title: "Diagnostics"}, run: getDiagnostics}

// severityNames are the LSP severities' names, at their values (1 to 4): an array the compiler
// lays out, where a map literal is built by the package's init at every start.
var severityNames = [...]string{1: "error", 2: "warning", 3: "information", 4: "hint"}

// severityName is severity s's name ("" for a value LSP does not define).
func severityName(s workspace.Severity) string {
	if s < 1 || int(s) >= len(severityNames) {
		return ""
	}
	return severityNames[s]
}

func severityLevel(name string) workspace.Severity {
	for s, n := range severityNames {
		if n != "" && n == name {
			return workspace.Severity(s)
		}
	}
	return 2
}

const maxDiagnosticsShown = 200

func getDiagnostics(ctx context.Context, env *Env, in getDiagnosticsIn) Result {
	var paths []string
	if in.Path != "" {
		abs, bad := resolve(env, "path", in.Path, false)
		if bad != nil {
			return *bad
		}
		paths = []string{abs}
	}
	fds, err := env.WS.Diagnostics(ctx, paths)
	if errors.Is(err, workspace.ErrUnsupported) {
		return Errorf("this editor does not report diagnostics to agentd; check the code another way (for example run the compiler or the tests with run_program)")
	}
	if err != nil {
		return Errorf("the editor could not report diagnostics: %v", err)
	}
	min := severityLevel(in.MinSeverity)
	text, counts, locs := formatDiagnostics(env, fds, min, maxDiagnosticsShown)
	if text == "" {
		scope := "any file"
		if in.Path != "" {
			scope = rel(env, paths[0])
		}
		return Result{Output: fmt.Sprintf("No problems of severity %s or worse reported for %s.", severityName(min), scope), Raw: counts}
	}
	return Result{Output: text, Locations: locs, Raw: counts}
}

// formatDiagnostics lists diagnostics as path:line:col: severity: message [source code], worst
// files first.
func formatDiagnostics(env *Env, fds []workspace.FileDiagnostics, min workspace.Severity, limit int) (string, map[string]int, []Location) {
	counts := map[string]int{}
	type item struct {
		path string
		d    workspace.Diagnostic
	}
	var items []item
	for _, fd := range fds {
		for _, d := range fd.Diagnostics {
			sev := d.Severity
			if sev == 0 {
				sev = 1
			}
			if sev > min {
				continue
			}
			d.Severity = sev
			counts[severityName(sev)]++
			items = append(items, item{fd.Path, d})
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.d.Severity != b.d.Severity {
			return a.d.Severity < b.d.Severity
		}
		if a.path != b.path {
			return a.path < b.path
		}
		return a.d.Line < b.d.Line
	})
	var b strings.Builder
	var locs []Location
	for i, it := range items {
		if i == limit {
			fmt.Fprintf(&b, "[… %d more not shown]\n", len(items)-limit)
			break
		}
		src := ""
		if it.d.Source != "" || it.d.Code != "" {
			src = " [" + strings.TrimSpace(it.d.Source+" "+it.d.Code) + "]"
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s: %s%s\n", rel(env, it.path), it.d.Line, it.d.Column, severityName(it.d.Severity), strings.TrimSpace(it.d.Message), src)
		if len(locs) < 50 {
			locs = append(locs, Location{Path: it.path, Line: it.d.Line})
		}
	}
	if len(items) > 0 {
		var parts []string
		for _, s := range []string{"error", "warning", "information", "hint"} {
			if counts[s] > 0 {
				parts = append(parts, plural(counts[s], s))
			}
		}
		fmt.Fprintf(&b, "[%s]\n", strings.Join(parts, ", "))
	}
	return b.String(), counts, locs
}

// settledDiagnostics is afterEdit's wait: it polls the editor's diagnostics of paths
// until two answers poll apart agree (the language server has caught up) or wait runs out, and
// returns the errors in those files as text for the model ("" when there are none, or when the
// editor does not report diagnostics).
func settledDiagnostics(ctx context.Context, env *Env, paths []string, wait, poll time.Duration) string {
	if len(paths) == 0 || env == nil || env.WS == nil {
		return ""
	}
	deadline := time.Now().Add(wait)
	var last []workspace.FileDiagnostics
	for first := true; ; first = false {
		fds, err := env.WS.Diagnostics(ctx, paths)
		if err != nil {
			return ""
		}
		if !first && reflect.DeepEqual(fds, last) {
			break
		}
		last = fds
		if time.Now().Add(poll).After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(poll):
		}
	}
	text, counts, _ := formatDiagnostics(env, last, 1, 30)
	if counts["error"] == 0 {
		return ""
	}
	return text
}

// afterEdit appends the errors the editor reports in path once its diagnostics settle, when the
// engine asked for it (Env.DiagnosticsWait).
func afterEdit(ctx context.Context, env *Env, path string, r Result) Result {
	if env.DiagnosticsWait <= 0 {
		return r
	}
	poll := min(max(env.DiagnosticsWait/6, 50*time.Millisecond), 500*time.Millisecond)
	if text := settledDiagnostics(ctx, env, []string{path}, env.DiagnosticsWait, poll); text != "" {
		r.Output += "\n\nThe editor now reports these errors in " + rel(env, path) + ":\n" + text
	}
	return r
}
