// Package deptest fails when an import arrow between agentd's packages runs backwards (see
// docs/ARCHITECTURE.md), in the manner of tailscale's tstest/deptest: it asks `go list` for
// every package's imports and checks each against the allowed direction.
package deptest

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/agentd-dev/agentd"

// layer names the architectural unit a package belongs to, by longest matching prefix.
func layer(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	for _, l := range []string{
		"cmd", "protocol", "jsonrpc", "rpc", "editorbridge", "session", "mcp", "completion", "transcribe", "providers", "tools", "workspace", "config", "prompts", "sandbox",
		"internal/test/fakemodel", "internal/test/deptest", "internal/clip", "internal/jscan", "internal/test/testbin", "clients",
	} {
		if rel == l || strings.HasPrefix(rel, l+"/") {
			return l
		}
	}
	return rel
}

// allowed lists, per layer, the agentd layers it may import, each with the reason the arrow is
// there; every other arrow runs backwards or sideways. docs/ARCHITECTURE.md draws the same graph
// as rows, each importing only rows below it (TestPictureRunsDownward), and lists the same arrows
// with the same reasons (TestArchitectureDocListsTheArrows keeps the two in step). Packages under
// internal/test/ are imported by tests only (TestDaemonDoesNotLink).
var allowed = map[string]map[string]string{
	"cmd": {
		"rpc":                   "serve runs the server on stdio",
		"session":               "exec drives one session without the wire",
		"protocol":              "exec builds requests and renders updates in the wire's types",
		"jsonrpc":               "the daemon's tests read its frames",
		"providers":             "registry.go names the concrete dialects, the only place that does",
		"tools":                 "the default tool registry handed to the engine",
		"workspace":             "exec's disk workspace and its diffs",
		"config":                "the settings store and its layers",
		"prompts":               "`agentd prompts export` and `check`, and loading the user's prompt config at start-up",
		"mcp":                   "agentd mcp list starts the configured servers and prints what they offer",
		"internal/clip":         clipReason,
		"internal/test/testbin": testbinReason,
		"sandbox":               sandboxCmdReason,
	},
	"rpc": {
		"session":       "handlers turn requests into Manager calls",
		"protocol":      "the wire types the handlers decode and answer",
		"jsonrpc":       "the one transport",
		"editorbridge":  "the bridge built on the connection once initialize says what the client can do",
		"providers":     "the provider source pairs settings with keys bound to their origin",
		"tools":         "the tool registry the server hands the engine",
		"workspace":     "the negotiated position encoding and the workspace port",
		"config":        "settings from initialize and didChangeConfiguration",
		"prompts":       "the prompt config loaded at start-up, handed to the engine",
		"completion":    "textDocument/inlineCompletion hands the text around the cursor to the completion engine",
		"transcribe":    "agent/x/transcribe hands the recording to the transcription endpoint",
		"internal/clip": clipReason,
	},
	"transcribe": {
		"providers":     "the recording goes to one of the user's providers, with the key bound to its origin",
		"internal/clip": clipReason,
	},
	"completion": {
		"providers":     "a completion goes to one of the user's providers, with the key bound to its origin",
		"config":        "the completion settings",
		"internal/clip": clipReason,
	},
	"editorbridge": {
		"protocol":              "the reverse requests' wire types; it implements session's and tools' ports without importing them",
		"jsonrpc":               "the one transport, shared with the daemon and the fake editor",
		"workspace":             "the workspace port it implements",
		"internal/clip":         clipReason,
		"internal/test/testbin": testbinReason,
	},
	"jsonrpc": {
		"protocol":       "frames, the codec and the session update encoder, nothing above them",
		"internal/clip":  clipReason,
		"internal/jscan": jscanReason,
	},
	"session": {
		"protocol":       "on purpose: session speaks the wire's types (requests, updates) and transcripts are SessionUpdate records, as gopls's server speaks LSP types",
		"providers":      "the neutral model: requests, messages, the event stream",
		"tools":          "the registry, the tools' results and tools/policy's decision",
		"workspace":      "roots and the workspace port the tools run against",
		"config":         "the settings: loop defaults, mode names, providers",
		"prompts":        "every text the model reads is rendered from the prompt config",
		"mcp":            "a turn's tool set is the built-in tools plus its MCP servers', one snapshot",
		"internal/clip":  clipReason,
		"internal/jscan": jscanReason,
	},
	"mcp": {
		"tools":         "the servers' tools are contributed as tools.Tool values, next to the built-in ones",
		"internal/clip": clipReason,
	},
	"tools": {
		"workspace":     "the port the tools touch the project through",
		"providers":     "ToolSpec, in the seam file tools/registry.go",
		"config":        "tools/policy takes the permission mode names from the settings",
		"internal/clip": clipReason,
		"sandbox":       sandboxToolsReason,
	},
	"providers": {
		"config":         "a provider's settings",
		"internal/clip":  clipReason,
		"internal/jscan": jscanReason,
	},
	"workspace":               {"internal/clip": clipReason},
	"config":                  {"internal/clip": clipReason},
	"prompts":                 {}, // a leaf: the caller hands it the tool catalog and the run values
	"protocol":                {},
	"internal/test/fakemodel": {"providers": "the neutral model it scripts", "protocol": "the wire types", "internal/clip": clipReason},
	"internal/clip":           {},
	"internal/jscan":          {},
	"internal/test/testbin":   {}, // test helper: builds cmd/agentd by running the go command
	"sandbox":                 {}, // the OS sandbox's policy and helper, over the standard library and x/sys
}

const (
	sandboxCmdReason   = "main runs the sandbox helper first thing and installs itself as it"
	sandboxToolsReason = "run_program starts programs through the sandbox helper"
)

// testbinReason is why tests may import internal/test/testbin: the binary is built once for every
// package that runs it (the daemon's tests, the fake editor's scenarios).
const testbinReason = "tests run the binary, built once"

// clipReason is why every layer may import internal/clip: a cut that splits a UTF-8 character
// is the same bug wherever it happens, so there is one function for it.
const clipReason = "the one rune-safe clip"

// jscanReason is why a layer may import internal/jscan: the dialects' streamed chunks and the
// connection's frames are read by one scanner, with one set of tests and fuzzers.
const jscanReason = "the one JSON scanner"

// leaves may import only the standard library (internal/clip must, since everything imports it).
var stdlibOnly = map[string]bool{"protocol": true, "internal/clip": true, "internal/jscan": true, "internal/test/testbin": true}

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
		{ImportPath: module + "/protocol", Imports: []string{"go.uber.org/zap"}},
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
			if _, ok := may[to]; !ok {
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
		if from == "cmd" || from == "providers" || from == "internal/test/fakemodel" {
			continue
		}
		for _, imp := range p.Imports {
			// providertest (the harness), keys (where keys come from) and httpsse (the transport
			// and its SSE reader) are no dialects.
			if strings.HasPrefix(imp, module+"/providers/") && !strings.HasPrefix(imp, module+"/providers/providertest") &&
				!strings.HasPrefix(imp, module+"/providers/keys") && !strings.HasPrefix(imp, module+"/providers/httpsse") {
				t.Errorf("%s imports the dialect %s; only cmd/agentd names concrete providers", p.ImportPath, imp)
			}
		}
	}
}

// TestArchitectureDocListsTheArrows holds docs/ARCHITECTURE.md's table of allowed arrows equal
// to allowed: every arrow with its reason, and no other.
func TestArchitectureDocListsTheArrows(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		// | `from` → `to` | reason |
		cells := strings.Split(line, "|")
		if len(cells) != 4 || !strings.Contains(cells[1], "→") {
			continue
		}
		from, to, _ := strings.Cut(cells[1], "→")
		key := strings.Trim(strings.TrimSpace(from), "`") + " → " + strings.Trim(strings.TrimSpace(to), "`")
		documented[key] = strings.TrimSpace(cells[2])
	}
	for from, tos := range allowed {
		for to, why := range tos {
			key := from + " → " + to
			if why == "" {
				t.Errorf("%s: no reason given", key)
			}
			got, ok := documented[key]
			switch {
			case !ok:
				t.Errorf("docs/ARCHITECTURE.md does not list the arrow %s", key)
			case got != why:
				t.Errorf("docs/ARCHITECTURE.md gives %s the reason %q, the table %q", key, got, why)
			}
			delete(documented, key)
		}
	}
	for key := range documented {
		t.Errorf("docs/ARCHITECTURE.md lists the arrow %s, which the table does not allow", key)
	}
}

// TestPictureRunsDownward reads the rows of docs/ARCHITECTURE.md's import picture and fails when
// an allowed arrow between shipped layers points at its own row or one above it: the folders and
// the picture draw the layers, and no arrow runs back up.
func TestPictureRunsDownward(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## Packages and the direction of their imports\n\n```\n")
	picture, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("docs/ARCHITECTURE.md has no import picture under its heading")
	}
	row := map[string]int{}
	for i, line := range strings.Split(strings.TrimSpace(picture), "\n") {
		names, _, _ := strings.Cut(line, "  ") // two spaces start the row's comment
		for _, name := range strings.Split(names, " · ") {
			row[layer(module+"/"+strings.TrimSpace(name))] = i
		}
	}
	for from, tos := range allowed {
		if strings.HasPrefix(from, "internal/test/") {
			continue
		}
		rf, ok := row[from]
		if !ok {
			t.Errorf("the import picture does not draw %s", from)
			continue
		}
		for to := range tos {
			if strings.HasPrefix(to, "internal/test/") {
				continue // test-only helpers, imported by tests of any row
			}
			if rt, ok := row[to]; !ok {
				t.Errorf("the import picture does not draw %s", to)
			} else if rt <= rf {
				t.Errorf("the arrow %s → %s runs from row %d to row %d of the import picture: not downward", from, to, rf+1, rt+1)
			}
		}
	}
}

func isStdlib(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

// notInDaemon are modules the daemon must not link, with why; their packages may stay in tests.
var notInDaemon = map[string]string{
	"go.lsp.dev/jsonrpc2": "jsonrpc is agentd's own JSON-RPC connection: this one's default codec linked a second " +
		"JSON implementation the daemon never used, and its reader goroutines grew their stacks deep at start",
	"github.com/go-json-experiment/json": "encoding/json is the one JSON implementation (it came in with go.lsp.dev/jsonrpc2)",
}

// TestDaemonDoesNotLink asks `go list -deps` for what cmd/agentd links and fails on each package
// of a module in notInDaemon, and on each test-only package (internal/test/...).
func TestDaemonDoesNotLink(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", module+"/cmd/agentd").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps found only %d packages", len(deps))
	}
	for _, pkg := range deps {
		if strings.HasPrefix(pkg, module+"/internal/test/") {
			t.Errorf("cmd/agentd links %s: packages under internal/test/ are for tests only", pkg)
		}
		for mod, why := range notInDaemon {
			if pkg == mod || strings.HasPrefix(pkg, mod+"/") {
				t.Errorf("cmd/agentd links %s: %s", pkg, why)
			}
		}
	}
}
