package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/workspace"
)

var symbolFiles = map[string]string{
	"srv/server.go": "package srv\n\ntype Server struct{}\n\nfunc (s *Server) HandleRequest() {}\n\nfunc NewServer() *Server { return nil }\n\nconst MaxServers = 3\n",
	"web/app.ts":    "export class AppServer {\n  handleRequest(req: Request): void {\n  }\n}\nexport interface ServerOptions { port: number }\nexport const serverName = 'x'\n",
	"py/mod.py":     "class Server:\n    def handle_request(self):\n        pass\n\nasync def serve():\n    pass\n",
	"rs/lib.rs":     "pub struct Server;\npub fn new_server() -> Server { Server }\n",
	"c/s.c":         "#define SERVER_MAX 4\nstruct server {\n  int fd;\n};\nint server_start(struct server *s)\n{\n  return 0;\n}\n",
	"uses.go":       "package x\n\n// Server is mentioned here but not defined.\nvar _ = srv.NewServer()\n",
}

func TestFindSymbolFromEditor(t *testing.T) {
	h := newHarness(t, symbolFiles)
	h.ws.symbols = []workspace.Symbol{
		{Name: "NewServer", Kind: "Function", Path: h.path("srv/server.go"), Line: 7},
		{Name: "Server", Kind: "Struct", Path: h.path("srv/server.go"), Line: 3},
		{Name: "Server", Kind: "Struct", Path: "/usr/lib/go/src/x/server.go", Line: 1},
	}
	r := mustOK(t, h.run("find_symbol", map[string]any{"query": "Server"}))
	if !strings.HasPrefix(r.Output, "Server (struct) srv/server.go:3\nNewServer (function) srv/server.go:7\n[from the editor's language servers]") {
		t.Fatalf("output:\n%s", r.Output)
	}
}

func TestFindSymbolScan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ctags func() string
	}{
		{"builtin", func() string { return "" }},
		{"ctags", ctagsOnce},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ctags() == "" && tc.name == "ctags" {
				t.Skip("universal-ctags with JSON output is not installed")
			}
			old := ctagsPath
			ctagsPath = tc.ctags
			defer func() { ctagsPath = old }()
			h := newHarness(t, symbolFiles)
			h.ws.noSymbols = true
			r := mustOK(t, h.run("find_symbol", map[string]any{"query": "Server"}))
			mustContain(t, r.Output, "Server (", "srv/server.go:3", "py/mod.py:1", "rs/lib.rs:1", "NewServer (", "AppServer (", "ServerOptions (", "MaxServers (")
			if strings.Contains(r.Output, "uses.go") {
				t.Fatalf("a mention was reported as a definition:\n%s", r.Output)
			}
			// Exact matches first.
			if !strings.HasPrefix(r.Output, "Server (") {
				t.Fatalf("exact match not first:\n%s", r.Output)
			}
			r = mustOK(t, h.run("find_symbol", map[string]any{"query": "handlerequest", "path": "web"}))
			mustContain(t, r.Output, "handleRequest (method", "web/app.ts:2")
			if strings.Contains(r.Output, "srv/") {
				t.Fatalf("path filter ignored:\n%s", r.Output)
			}
			r = mustOK(t, h.run("find_symbol", map[string]any{"query": "server_start"}))
			mustContain(t, r.Output, "server_start (", "c/s.c:5")
			r = mustOK(t, h.run("find_symbol", map[string]any{"query": "NoSuchThing"}))
			mustContain(t, r.Output, "No definitions matching")
		})
	}
}

func TestFindSymbolRefusals(t *testing.T) {
	h := newHarness(t, nil)
	mustErr(t, h.run("find_symbol", map[string]any{}), "missing required field query")
	mustErr(t, h.run("find_symbol", map[string]any{"query": "  "}), "field query is empty")
	mustErr(t, h.run("find_symbol", map[string]any{"query": "x", "path": "/etc"}), "outside")
}

// filterTags keeps only tags whose name contains the query, whatever else on the line matches,
// skips what it cannot decode, and reads a stream far larger than what it keeps.
func TestFilterTags(t *testing.T) {
	line := func(name, path, scope string) string {
		b, _ := json.Marshal(map[string]any{"_type": "tag", "name": name, "path": path, "line": 3, "kind": "func", "scope": scope})
		return string(b) + "\n"
	}
	var in strings.Builder
	in.WriteString(line("NewServer", "a.go", "p"))
	in.WriteString(line("helper", "server/a.go", "Server"))          // the query in path and scope only
	in.WriteString(`{"_type": "ptag", "name": "SERVER_TAG"}` + "\n") // not a tag
	in.WriteString("{not json server\n")
	in.WriteString(`{"_type": "tag", "name": "` + strings.Repeat("server", maxTagLine/6+1) + `"}` + "\n") // over the line limit
	in.WriteString(line("serverName", "b.ts", ""))
	in.WriteString(line("Zürich", "c.go", "")) // a non-ASCII name
	for i := range 20000 {
		in.WriteString(line(fmt.Sprintf("other%d", i), "d.go", ""))
	}
	in.WriteString(line("LastServer", "e.go", "")) // no trailing newline below
	text := strings.TrimSuffix(in.String(), "\n")

	syms, err := filterTags(strings.NewReader(text), "SERVER")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range syms {
		names = append(names, s.Name+"@"+s.Path)
	}
	if got, want := strings.Join(names, " "), "NewServer@a.go serverName@b.ts LastServer@e.go"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	syms, err = filterTags(strings.NewReader(text), "zür")
	if err != nil || len(syms) != 1 || syms[0].Name != "Zürich" {
		t.Errorf("non-ASCII query: %v %v", syms, err)
	}
	// ctags may escape non-ASCII in JSON: a non-ASCII query still finds the name.
	syms, _ = filterTags(strings.NewReader(`{"_type": "tag", "name": "Z\u00fcrich", "path": "c.go", "line": 1}`), "ZÜR")
	if len(syms) != 1 {
		t.Errorf("escaped non-ASCII name not found: %v", syms)
	}
}

// The ctags path holds only the matches, not the whole output: on a generated tree whose every
// file defines the query among many other names, the heap after the scan stays small.
func BenchmarkFindSymbolCtags(b *testing.B) {
	if ctagsOnce() == "" {
		b.Skip("universal-ctags with JSON output is not installed")
	}
	dir := b.TempDir()
	var files []string
	for i := range 2000 {
		var src strings.Builder
		fmt.Fprintf(&src, "package p\n\ntype Widget%d struct{}\n", i)
		for f := range 30 {
			fmt.Fprintf(&src, "func helper%d_%d() {}\n", i, f)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%d.go", i))
		if err := os.WriteFile(p, []byte(src.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, p)
	}
	for b.Loop() {
		syms, err := runCtagsParallel(context.Background(), files, "widget")
		if err != nil || len(syms) != 2000 {
			b.Fatalf("%d symbols, %v", len(syms), err)
		}
	}
}

// TestFindSymbolIgnoresProjectCtagsConfig: ctags reads ./.ctags.d/*.ctags from its working
// directory, so a cloned repository could add options to a program agentd runs on its own (an
// output file, regexes that invent symbols). ctags runs with --options=NONE.
func TestFindSymbolIgnoresProjectCtagsConfig(t *testing.T) {
	if ctagsOnce() == "" {
		t.Skip("universal-ctags with JSON output is not installed")
	}
	old := ctagsPath
	ctagsPath = ctagsOnce
	defer func() { ctagsPath = old }()
	h := newHarness(t, map[string]string{
		"srv/server.go":            "package srv\n\n// INJECTEDSYMBOL comes from the project's ctags options.\nfunc Serve() {}\n",
		".ctags.d/evil.ctags":      "--regex-Go=/^\\/\\/ (INJECTEDSYMBOL)/\\1/x,injected/\n",
		".ctags.d/also-evil.ctags": "--languages=-Go\n",
	})
	t.Chdir(h.path(""))
	h.ws.noSymbols = true
	r := mustOK(t, h.run("find_symbol", map[string]any{"query": "INJECTEDSYMBOL"}))
	if strings.Contains(r.Output, "server.go") {
		t.Fatalf("the project's .ctags.d reached ctags:\n%s", r.Output)
	}
	r = mustOK(t, h.run("find_symbol", map[string]any{"query": "Serve"}))
	mustContain(t, r.Output, "Serve (", "srv/server.go:4")
}
