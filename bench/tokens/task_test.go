package tokens

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// The task: rename Store.Load to Store.Read in a small Go project, fix its callers and the
// README, run a program to check nothing calls Load any more (16 steps), then, on a second
// prompt, document Read and check the tests (8 steps). Each step is one model request; the
// replies are scripted, the tools are agentd's own on a real directory.

// call is one scripted tool call.
type call struct {
	name string
	args string
}

// step is one scripted model reply: a sentence, then the calls (none ends the turn).
type step struct {
	text  string
	calls []call
}

// task is a scripted task: the user's prompts, the model's replies (each prompt's turn ends at
// a reply without calls), the project it starts from, and a check of what it left there.
type task struct {
	name    string
	prompts []string
	script  []step
	write   func(t testing.TB, dir string)
	check   func(dir string) error
}

// rename is the task issue 34 item 5 asks for.
var rename = task{name: "rename", prompts: renamePrompts, script: script, write: writeProject, check: func(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "store_test.go"))
	if err != nil || !strings.Contains(string(b), "TestReadMissing") || strings.Contains(string(b), ".Load(") {
		return fmt.Errorf("the task's edits did not all land:\n%s", b)
	}
	return nil
}}

// reads is a harder case for the cache: 24 steps that each read another 6 KB file (the shape of
// session's compactionTask), so the elision boundary moves every third step.
var reads = task{name: "reads", prompts: []string{"Read every file of the project and tell me what it holds."}, write: func(t testing.TB, dir string) {
	t.Helper()
	for i := range 23 {
		var sb strings.Builder
		for l := range 150 {
			fmt.Fprintf(&sb, "func f%d_%d() int { return %d } // line of file %d\n", i, l, l, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.go", i)), []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}, check: func(string) error { return nil }}

func init() {
	for i := range 23 {
		reads.script = append(reads.script, step{fmt.Sprintf("Next, file %d.", i), []call{{"read_file", fmt.Sprintf(`{"path":"f%02d.go"}`, i)}}})
	}
	reads.script = append(reads.script, step{"Every file holds 150 one-line functions that return their line number.", nil})
}

// renamePrompts are the user's two prompts; the first is answered by steps 1-16, the second by
// 17-24.
var renamePrompts = []string{
	"Rename Store.Load to Store.Read across the project, fix every caller and the README, and check that nothing calls Load any more.",
	"Thanks. Now give Read a proper doc comment and make sure the tests still refer to it correctly.",
}

// firstTurnSteps is how many of script's steps answer the first prompt.
const firstTurnSteps = 16

var script = []step{
	// The first prompt.
	{"I'll start by looking at the project's layout.", []call{{"list_dir", `{"path":"."}`}}},
	{"Now I'll find every use of Load.", []call{{"search_text", `{"pattern":"Load\\(","include":["*.go"]}`}}},
	{"Let me read the store itself.", []call{{"read_file", `{"path":"store.go"}`}}},
	{"And its tests and the handler, which call it.", []call{{"read_file", `{"path":"store_test.go"}`}, {"read_file", `{"path":"handler.go"}`}}},
	{"The cache wraps the store too.", []call{{"read_file", `{"path":"cache.go"}`}}},
	{"I'll rename the method and its doc comment.", []call{{"edit_file", `{"path":"store.go","edits":[{"old_text":"// Load returns the value stored under key","new_text":"// Read returns the value stored under key"},{"old_text":"func (s *Store) Load(key string) ([]byte, error) {","new_text":"func (s *Store) Read(key string) ([]byte, error) {"}]}`}}},
	{"Now the tests.", []call{{"edit_file", `{"path":"store_test.go","edits":[{"old_text":".Load(","new_text":".Read(","replace_all":true}]}`}}},
	{"Let me check what still refers to Load.", []call{{"search_text", `{"pattern":"\\.Load\\(","include":["*.go"]}`}}},
	{"The handler has the remaining calls; I'll look at them in context.", []call{{"read_file", `{"path":"handler.go","start_line":1,"end_line":80}`}}},
	{"Fixing the handler.", []call{{"edit_file", `{"path":"handler.go","edits":[{"old_text":".Load(","new_text":".Read(","replace_all":true}]}`}}},
	{"And the cache.", []call{{"edit_file", `{"path":"cache.go","edits":[{"old_text":".Load(","new_text":".Read(","replace_all":true}]}`}}},
	{"The README documents the API; let me read it.", []call{{"read_file", `{"path":"README.md"}`}}},
	{"Updating the README.", []call{{"edit_file", `{"path":"README.md","edits":[{"old_text":"Store.Load","new_text":"Store.Read","replace_all":true}]}`}}},
	{"Now I'll run a search over the whole tree as a program, to be sure.", []call{{"run_program", `{"command":["grep","-rn","--include=*.go","Load(","."]}`}}},
	{"Only the cache's own loader is left, which is a different function. One last look at the diagnostics.", []call{{"get_diagnostics", `{}`}}},
	{"Store.Load is now Store.Read: the method and its doc comment in store.go, the calls in store_test.go, handler.go and cache.go, and the README. Nothing calls Store.Load any more (cache.go's own loadEntry is unrelated).", nil},
	// The second prompt.
	{"Let me read Read as it is now.", []call{{"read_file", `{"path":"store.go","start_line":1,"end_line":60}`}}},
	{"I'll write a fuller doc comment.", []call{{"edit_file", `{"path":"store.go","edits":[{"old_text":"// Read returns the value stored under key","new_text":"// Read returns a copy of the value stored under key, or ErrNotFound when there is none.\n// It is safe for concurrent use; the copy may be changed by the caller.\n// Read returns the value stored under key"}]}`}}},
	{"Now the tests' references.", []call{{"search_text", `{"pattern":"Read\\(","path":"store_test.go"}`}}},
	{"Let me read the test that covers a missing key.", []call{{"read_file", `{"path":"store_test.go","start_line":1,"end_line":70}`}}},
	{"Its name still says Load; renaming it.", []call{{"edit_file", `{"path":"store_test.go","edits":[{"old_text":"func TestLoadMissing(","new_text":"func TestReadMissing("}]}`}}},
	{"I'll list the tests to check the names.", []call{{"run_program", `{"command":["grep","-n","^func Test","store_test.go"]}`}}},
	{"And one more search for the old test names.", []call{{"search_text", `{"pattern":"TestLoad","literal":true}`}}},
	{"Read now has a doc comment that says what it returns, the error for a missing key and that it is safe for concurrent use; the test of a missing key is TestReadMissing, and every test calls Read.", nil},
}

// writeProject writes the task's project into dir: a store, its tests, two callers, a README.
func writeProject(t testing.TB, dir string) {
	t.Helper()
	var store, test, handler, cache strings.Builder
	store.WriteString("package store\n\nimport (\n\t\"errors\"\n\t\"sort\"\n\t\"sync\"\n)\n\n// ErrNotFound is returned for a key the store does not hold.\nvar ErrNotFound = errors.New(\"store: not found\")\n\n// Store is a map of byte values guarded by a mutex.\ntype Store struct {\n\tmu   sync.Mutex\n\tdata map[string][]byte\n}\n\n")
	store.WriteString("// Load returns the value stored under key\nfunc (s *Store) Load(key string) ([]byte, error) {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\tv, ok := s.data[key]\n\tif !ok {\n\t\treturn nil, ErrNotFound\n\t}\n\treturn append([]byte(nil), v...), nil\n}\n\n")
	for i := range 24 {
		fmt.Fprintf(&store, "// Field%02d returns the %d-th field of the record under key, or \"\" when it has none.\nfunc (s *Store) Field%02d(key string) string {\n\tv, err := s.Load(key)\n\tif err != nil {\n\t\treturn \"\"\n\t}\n\tfields := splitFields(v)\n\tif len(fields) <= %d {\n\t\treturn \"\"\n\t}\n\treturn fields[%d]\n}\n\n", i, i, i, i, i)
	}
	store.WriteString("func splitFields(v []byte) []string {\n\tvar out []string\n\tstart := 0\n\tfor i, b := range v {\n\t\tif b == ',' {\n\t\t\tout = append(out, string(v[start:i]))\n\t\t\tstart = i + 1\n\t\t}\n\t}\n\treturn append(out, string(v[start:]))\n}\n\n// Keys returns the keys in order.\nfunc (s *Store) Keys() []string {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\tvar ks []string\n\tfor k := range s.data {\n\t\tks = append(ks, k)\n\t}\n\tsort.Strings(ks)\n\treturn ks\n}\n")
	test.WriteString("package store\n\nimport (\n\t\"errors\"\n\t\"testing\"\n)\n\nfunc TestLoadMissing(t *testing.T) {\n\ts := &Store{data: map[string][]byte{}}\n\tif _, err := s.Load(\"nope\"); !errors.Is(err, ErrNotFound) {\n\t\tt.Fatalf(\"err = %v\", err)\n\t}\n}\n\n")
	for i := range 12 {
		fmt.Fprintf(&test, "func TestField%02d(t *testing.T) {\n\ts := &Store{data: map[string][]byte{\"k\": []byte(\"%s\")}}\n\tif v, _ := s.Load(\"k\"); len(v) == 0 {\n\t\tt.Fatal(\"empty\")\n\t}\n\tif got := s.Field%02d(\"k\"); got != \"f%d\" {\n\t\tt.Errorf(\"Field%02d = %%q\", got)\n\t}\n}\n\n", i, fieldsUpTo(i), i, i, i)
	}
	handler.WriteString("package store\n\nimport (\n\t\"encoding/json\"\n\t\"net/http\"\n)\n\n// Handler serves the store over HTTP: GET /{key} answers the value.\ntype Handler struct {\n\tStore *Store\n}\n\n")
	for i := range 10 {
		fmt.Fprintf(&handler, "func (h Handler) serve%02d(w http.ResponseWriter, r *http.Request) {\n\tkey := r.URL.Query().Get(\"k%d\")\n\tv, err := h.Store.Load(key)\n\tif err != nil {\n\t\thttp.Error(w, err.Error(), http.StatusNotFound)\n\t\treturn\n\t}\n\t_ = json.NewEncoder(w).Encode(map[string]string{\"key\": key, \"value\": string(v)})\n}\n\n", i, i)
	}
	cache.WriteString("package store\n\nimport \"sync\"\n\n// Cache keeps recently read values of a Store.\ntype Cache struct {\n\tmu    sync.Mutex\n\tstore *Store\n\tseen  map[string][]byte\n}\n\n// loadEntry is the cache's own loader (not the store's).\nfunc (c *Cache) loadEntry(key string) []byte { return c.seen[key] }\n\n")
	for i := range 14 {
		fmt.Fprintf(&cache, "// Get%02d returns the value of key, reading the store on a miss (variant %d).\nfunc (c *Cache) Get%02d(key string) ([]byte, error) {\n\tc.mu.Lock()\n\tdefer c.mu.Unlock()\n\tif v := c.loadEntry(key); v != nil {\n\t\treturn v, nil\n\t}\n\tv, err := c.store.Load(key)\n\tif err == nil {\n\t\tc.seen[key] = v\n\t}\n\treturn v, err\n}\n\n", i, i, i)
	}
	files := map[string]string{
		"go.mod":        "module example.com/store\n\ngo 1.22\n",
		"store.go":      store.String(),
		"store_test.go": test.String(),
		"handler.go":    handler.String(),
		"cache.go":      cache.String(),
		"README.md":     "# store\n\nA small key-value store.\n\n- `Store.Load(key)` returns the value stored under key, or `ErrNotFound`.\n- `Handler` serves `Store.Load` over HTTP.\n- `Cache` keeps recent `Store.Load` results.\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fieldsUpTo(n int) string {
	var fs []string
	for i := 0; i <= n; i++ {
		fs = append(fs, fmt.Sprintf("f%d", i))
	}
	return strings.Join(fs, ",")
}

// editorWS is the disk workspace with what an editor adds: unsaved buffers (the files the agent
// edited since the last save), diagnostics that follow the rename (the callers are broken from
// the store's edit until each is fixed), and what the user looks at. It reads the task's
// progress from step, the number of model requests so far.
type editorWS struct {
	*workspace.Disk
	dir  string
	step *atomic.Int32

	mu    sync.Mutex
	dirty []string
}

var _ workspace.Workspace = (*editorWS)(nil)

func (w *editorWS) DirtyBuffers(context.Context) ([]workspace.Buffer, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []workspace.Buffer
	for _, p := range w.dirty {
		out = append(out, workspace.Buffer{Path: p})
	}
	return out, nil
}

func (w *editorWS) ApplyEdit(ctx context.Context, label string, changes []workspace.Change) error {
	if err := w.Disk.ApplyEdit(ctx, label, changes); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range changes {
		if !slices.Contains(w.dirty, c.Path) {
			w.dirty = append(w.dirty, c.Path)
		}
	}
	return nil
}

func (w *editorWS) SaveBuffers(ctx context.Context, paths []string) (workspace.SaveResult, error) {
	w.mu.Lock()
	w.dirty = slices.DeleteFunc(w.dirty, func(p string) bool { return len(paths) == 0 || slices.Contains(paths, p) })
	w.mu.Unlock()
	return w.Disk.SaveBuffers(ctx, paths)
}

// Diagnostics: from the store's edit (step 6) the callers not yet fixed do not compile.
func (w *editorWS) Diagnostics(_ context.Context, paths []string) ([]workspace.FileDiagnostics, error) {
	n := int(w.step.Load())
	broken := func(file string, lines ...int) workspace.FileDiagnostics {
		fd := workspace.FileDiagnostics{Path: filepath.Join(w.dir, file)}
		for _, l := range lines {
			fd.Diagnostics = append(fd.Diagnostics, workspace.Diagnostic{Line: l, Column: 17, Severity: 1, Source: "compiler", Message: "h.Store.Load undefined (type *Store has no field or method Load)"})
		}
		return fd
	}
	var out []workspace.FileDiagnostics
	if n >= 6 && n < 7 {
		out = append(out, broken("store_test.go", 10, 19))
	}
	if n >= 6 && n < 10 {
		out = append(out, broken("handler.go", 16, 27, 38))
	}
	if n >= 6 && n < 11 {
		out = append(out, broken("cache.go", 24, 38))
	}
	if len(paths) > 0 {
		out = slices.DeleteFunc(out, func(fd workspace.FileDiagnostics) bool { return !slices.Contains(paths, fd.Path) })
	}
	return out, nil
}

// EditorState: the user looks at the store, with Load selected, for the first prompt, and at
// its tests for the second.
func (w *editorWS) EditorState(context.Context) (workspace.EditorState, error) {
	if int(w.step.Load()) < firstTurnSteps {
		return workspace.EditorState{
			ActiveFile: filepath.Join(w.dir, "store.go"),
			Selection:  &workspace.Selection{Path: filepath.Join(w.dir, "store.go"), StartLine: 18, EndLine: 19, Text: "// Load returns the value stored under key\nfunc (s *Store) Load(key string) ([]byte, error) {"},
			OpenFiles:  []string{filepath.Join(w.dir, "store.go"), filepath.Join(w.dir, "handler.go")},
		}, nil
	}
	return workspace.EditorState{
		ActiveFile: filepath.Join(w.dir, "store_test.go"),
		OpenFiles:  []string{filepath.Join(w.dir, "store.go"), filepath.Join(w.dir, "store_test.go"), filepath.Join(w.dir, "handler.go")},
	}, nil
}

// source is the session's one provider, the dialect under test pointed at the local server.
type source struct {
	prov providers.Provider
	cfg  providers.Config
}

func (s source) Provider(context.Context, string) (providers.Provider, providers.Config, error) {
	return s.prov, s.cfg, nil
}

// quietClient is an editor that shows nothing and is never asked (the task runs in auto mode).
type quietClient struct{}

func (quietClient) Update(string, protocol.SessionUpdate) {}
func (quietClient) RequestPermission(context.Context, protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
	return protocol.RequestPermissionResult{}, nil
}
func (quietClient) CanAskPermission() bool { return false }

// newManager is a session manager as the daemon makes one, in auto mode without the sandbox
// (nobody to ask; the programs are grep), with agentd's own tools and prompts.
func newManager(t testing.TB, src session.ProviderSource, ws session.WorkspaceFactory) *session.Manager {
	set := config.Defaults()
	set.Mode = config.ModeAuto
	set.MaxIterations = 30
	set.Sandbox = config.Sandbox{Mode: config.SandboxOff}
	m := session.NewManager(session.Deps{
		Client:       quietClient{},
		Workspaces:   ws,
		Providers:    src,
		Tools:        tools.Default(),
		Settings:     func() config.Settings { return set },
		StateDir:     t.TempDir(),
		StateKeyFile: filepath.Join(t.TempDir(), "state.key"),
		NoTitles:     true,
	})
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}

// play runs the task's prompts in a new session on dir.
func play(m *session.Manager, dir string, tk task) error {
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		return err
	}
	for i, p := range tk.prompts {
		res, err := m.Prompt(context.Background(), protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock(p)}})
		if err != nil {
			return fmt.Errorf("prompt %d: %v", i+1, err)
		}
		if res.StopReason != protocol.StopEndTurn || res.Meta["agentd/error"] != nil {
			b, _ := json.Marshal(res)
			return fmt.Errorf("prompt %d ended %s", i+1, b)
		}
	}
	return tk.check(dir)
}

// runTask runs tk through d against a fresh recording server, in a new session on a fresh copy
// of its project, and returns what the server recorded. The script's steps must all be used: a
// request more or fewer fails the test.
func runTask(t testing.TB, d *dialect, tk task) []recorded {
	t.Helper()
	dir := t.TempDir()
	tk.write(t, dir)
	srv := newServer(t, d, tk.script)
	prov, cfg := d.provider(t, srv.URL())
	ws := &editorWS{Disk: workspace.NewDisk(dir), dir: dir, step: &srv.steps}
	m := newManager(t, source{prov, cfg}, func(string, *workspace.Roots) workspace.Workspace { return ws })
	if err := play(m, dir, tk); err != nil {
		t.Fatalf("%s, %s: %v", tk.name, d.name, err)
	}
	if got, want := int(srv.steps.Load()), len(tk.script); got != want {
		t.Fatalf("%s, %s: the task took %d model requests, the script has %d steps", tk.name, d.name, got, want)
	}
	return srv.recorded()
}
