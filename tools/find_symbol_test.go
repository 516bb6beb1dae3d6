package tools

import (
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
