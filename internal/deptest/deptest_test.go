// Package deptest fails when an import arrow between agentd's packages runs backwards (see
// docs/ARCHITECTURE.md), in the manner of tailscale's tstest/deptest: it asks `go list` for
// every package's imports and checks each against the allowed direction.
package deptest

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/agentd-dev/agentd"

// layer names the architectural unit a package belongs to, by longest matching prefix.
func layer(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	for _, l := range []string{
		"cmd", "rpc/protocol", "rpc/jsonrpc", "rpc", "editorbridge", "session", "providers", "tools", "workspace", "config",
		"internal/fakemodel", "internal/deptest", "internal/clip", "internal/testbin", "clients",
	} {
		if rel == l || strings.HasPrefix(rel, l+"/") {
			return l
		}
	}
	return rel
}

// allowed lists, per layer, the agentd layers it may import. Everything else is a backwards or
// sideways arrow. From ARCHITECTURE.md:
//
//	cmd/agentd ─► rpc ─► session ─► providers (+ providers/<dialect>)
//	                 │         └──► tools ─► workspace
//	                 └─► editorbridge ─► workspace, rpc/protocol, rpc/jsonrpc
//	config, rpc/protocol: leaves; rpc/jsonrpc: the transport, over rpc/protocol only
//
// internal/clip (rune-safe shortening of text) is a leaf every layer may import: a cut that
// splits a UTF-8 character is the same bug wherever it happens, so there is one function for it.
var allowed = map[string][]string{
	"cmd": {"rpc", "rpc/protocol", "rpc/jsonrpc", "editorbridge", "session", "providers", "tools", "workspace", "config", "internal/clip", "internal/testbin"},
	"rpc": {"rpc/protocol", "rpc/jsonrpc", "editorbridge", "session", "providers", "tools", "workspace", "config", "internal/clip"},
	// editorbridge implements session's and tools' ports without importing them; rpc/jsonrpc is
	// the one transport, which the bridge's error type and the fake editor share with the daemon.
	// internal/testbin builds the binary the fake editor's scenarios also run against.
	"editorbridge": {"rpc/protocol", "rpc/jsonrpc", "workspace", "internal/clip", "internal/testbin"},
	// The transport knows frames, the codec and the session update encoder, nothing above them.
	"rpc/jsonrpc":        {"rpc/protocol", "internal/clip"},
	"session":            {"rpc/protocol", "providers", "tools", "workspace", "config", "internal/clip"},
	"tools":              {"workspace", "providers", "rpc/protocol", "config", "internal/clip"}, // providers: ToolSpec, in the seam file tools/registry.go
	"providers":          {"config", "internal/clip"},
	"workspace":          {"internal/clip"},
	"config":             {"internal/clip"},
	"rpc/protocol":       {},
	"internal/fakemodel": {"providers", "rpc/protocol", "internal/clip"},
	"internal/clip":      {},
	"internal/testbin":   {}, // test helper: builds cmd/agentd by running the go command
}

// leaves may import only the standard library (internal/clip must, since everything imports it).
var stdlibOnly = map[string]bool{"rpc/protocol": true, "internal/clip": true, "internal/testbin": true}

type goPackage struct {
	ImportPath  string
	Imports     []string
	TestImports []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(out)
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func TestImportArrows(t *testing.T) {
	for _, v := range violations(listPackages(t)) {
		t.Error(v)
	}
}

// TestViolationsCatchesBackwardsArrows keeps the checker honest on a made-up graph.
func TestViolationsCatchesBackwardsArrows(t *testing.T) {
	got := violations([]goPackage{
		{ImportPath: module + "/workspace", Imports: []string{"os", module + "/session"}},
		{ImportPath: module + "/rpc/protocol", Imports: []string{"go.uber.org/zap"}},
		{ImportPath: module + "/session", Imports: []string{module + "/tools", module + "/rpc"}},
		{ImportPath: module + "/rpc", Imports: []string{module + "/session", module + "/editorbridge"}},
		{ImportPath: module + "/editorbridge/fakeeditor", TestImports: []string{module + "/session"}},
	})
	want := []string{"workspace → session", "only the standard library", "session → rpc", "editorbridge → session"}
	if len(got) != len(want) {
		t.Fatalf("violations = %q", got)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("violation %d = %q, want it to mention %q", i, got[i], w)
		}
	}
}

func violations(pkgs []goPackage) []string {
	var out []string
	for _, p := range pkgs {
		from := layer(p.ImportPath)
		may, known := allowed[from]
		if !known {
			continue // cmd tests, deptest itself, clients: not part of the layering
		}
		// Production and in-package test imports follow the same arrows.
		for _, imp := range append(append([]string{}, p.Imports...), p.TestImports...) {
			if stdlibOnly[from] && !isStdlib(imp) && !strings.HasPrefix(imp, p.ImportPath) {
				out = append(out, p.ImportPath+" imports "+imp+": "+from+" may import only the standard library")
				continue
			}
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := layer(imp)
			if to == from {
				continue
			}
			if !slices.Contains(may, to) {
				out = append(out, p.ImportPath+" imports "+imp+": the arrow "+from+" → "+to+" runs against docs/ARCHITECTURE.md")
			}
		}
	}
	return out
}

// TestOnlyCmdNamesProviders: concrete dialects are named in cmd/agentd only (and in their own
// tests), so adding one costs one registry line.
func TestOnlyCmdNamesProviders(t *testing.T) {
	for _, p := range listPackages(t) {
		from := layer(p.ImportPath)
		if from == "cmd" || from == "providers" || from == "internal/fakemodel" {
			continue
		}
		for _, imp := range p.Imports {
			// providertest (the harness) and keys (where keys come from) are no dialects.
			if strings.HasPrefix(imp, module+"/providers/") && !strings.HasPrefix(imp, module+"/providers/providertest") && !strings.HasPrefix(imp, module+"/providers/keys") {
				t.Errorf("%s imports the dialect %s; only cmd/agentd names concrete providers", p.ImportPath, imp)
			}
		}
	}
}

func isStdlib(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}
