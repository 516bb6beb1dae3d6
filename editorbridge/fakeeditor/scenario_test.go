package fakeeditor_test

// Scenario tests: each testdata/scenarios/*.txtar holds a workspace, a scripted model (a
// providers/replay script), the prompt, the permission answers, the files expected at the end
// and a golden transcript of update kinds. Each runs against the in-process server (rpc over a
// pipe) and against the built binary (its stdio). `go test -run Scenario -update` rewrites the
// goldens.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"golang.org/x/tools/txtar"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/testbin"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/replay"
	"github.com/agentd-dev/agentd/rpc"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts of testdata/scenarios")

const scenarioDir = "../../testdata/scenarios"

// scenario is one parsed txtar file.
type scenario struct {
	file    string
	archive *txtar.Archive
	config  map[string]string
	script  []byte
	files   map[string]string // relative path → text, the starting workspace
	want    map[string]string // relative path → text at the end (as the editor shows it)
	user    map[string]string // relative path → text the user types while the first permission prompt is up
	disk    map[string]string // relative path → text expected on disk (not in the buffer) at the end
	diags   []byte            // diagnostics.json: {relpath: [LSP Diagnostic]}
	symbols []byte            // symbols.json: [LSP WorkspaceSymbol] with relative paths as "uri"
	state   []byte            // editor_state.json: the agent/x/editor_state answer, paths relative
	outputs [][2]string       // "callID: text" lines: the call's final content must contain the text
	absent  []string
	golden  string
}

func loadScenario(t *testing.T, file string) *scenario {
	t.Helper()
	a, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario{file: file, archive: a, config: map[string]string{}, files: map[string]string{}, want: map[string]string{}, user: map[string]string{}, disk: map[string]string{}}
	for _, f := range a.Files {
		switch {
		case f.Name == "config":
			for _, line := range strings.Split(string(f.Data), "\n") {
				line, _, _ = strings.Cut(line, "#")
				k, v, ok := strings.Cut(line, ":")
				if ok {
					sc.config[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
		case f.Name == "replay.json":
			sc.script = f.Data
		case f.Name == "updates":
			sc.golden = string(f.Data)
		case strings.HasPrefix(f.Name, "files/"):
			sc.files[strings.TrimPrefix(f.Name, "files/")] = string(f.Data)
		case strings.HasPrefix(f.Name, "want/"):
			sc.want[strings.TrimPrefix(f.Name, "want/")] = string(f.Data)
		case f.Name == "outputs":
			for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				id, text, ok := strings.Cut(line, ":")
				if !ok {
					t.Fatalf("%s: outputs line %q is not \"callID: text\"", file, line)
				}
				sc.outputs = append(sc.outputs, [2]string{strings.TrimSpace(id), strings.TrimSpace(text)})
			}
		case f.Name == "diagnostics.json":
			sc.diags = f.Data
		case f.Name == "symbols.json":
			sc.symbols = f.Data
		case f.Name == "editor_state.json":
			sc.state = f.Data
		case strings.HasPrefix(f.Name, "disk/"):
			sc.disk[strings.TrimPrefix(f.Name, "disk/")] = string(f.Data)
		case strings.HasPrefix(f.Name, "user/"):
			sc.user[strings.TrimPrefix(f.Name, "user/")] = string(f.Data)
		default:
			t.Fatalf("%s: unknown section %q", file, f.Name)
		}
	}
	if sc.config["prompt"] == "" || sc.script == nil {
		t.Fatalf("%s: a scenario needs a prompt in config and a replay.json", file)
	}
	sc.absent = strings.Fields(sc.config["absent"])
	return sc
}

// editorOptions maps config "editor" to the fake editor's capabilities.
func (sc *scenario) editorOptions(t *testing.T) fakeeditor.Options {
	var o fakeeditor.Options
	switch sc.config["editor"] {
	case "", "full":
		o = fakeeditor.Full()
	case "minimal":
		o = fakeeditor.Minimal()
		o.Agent.Permissions.UI = true
	case "no-applyedit":
		o = fakeeditor.Full()
		o.ApplyEdit = false
	default:
		t.Fatalf("%s: unknown editor %q", sc.file, sc.config["editor"])
	}
	if enc := sc.config["encoding"]; enc != "" {
		o.PositionEncodings = []string{enc}
	}
	o.Timeout = 20 * time.Second
	return o
}

// transcript renders the updates as the golden compares them: kinds in order, tool calls with
// their kind and status, consecutive repeats collapsed, and the kinds whose timing is not part
// of a scenario's meaning (usage, titles, commands, config) left out. Permission requests are
// listed after, by title.
func transcript(ed *fakeeditor.Editor, root string) string {
	skip := []string{protocol.UpdateUsageUpdate, protocol.UpdateSessionInfoUpdate,
		protocol.UpdateAvailableCommandsUpdate, protocol.UpdateConfigOptionUpdate, protocol.UpdateCurrentModeUpdate}
	var lines []string
	for _, n := range ed.Updates() {
		u := n.Update
		if slices.Contains(skip, u.SessionUpdate) {
			continue
		}
		line := u.SessionUpdate
		switch u.SessionUpdate {
		case protocol.UpdateToolCall:
			line += " " + u.Kind + " " + u.Status + ": " + u.Title
		case protocol.UpdateToolCallUpdate:
			if u.Status != "" {
				line += " " + u.Status
			}
			for _, c := range u.ToolContent {
				switch {
				case c.Type == "diff":
					line += " +diff"
				case u.Status == protocol.StatusFailed && c.Content != nil:
					// Why it failed is part of the scenario: the model must be told.
					why, _, _ := strings.Cut(c.Content.Text, "\n")
					line += ": " + why
				}
			}
		case protocol.UpdateNotice:
			line += " " + u.Severity + ": " + u.NoticeTitle
		}
		if len(lines) > 0 && lines[len(lines)-1] == line {
			continue
		}
		lines = append(lines, line)
	}
	lines = append(lines, "# permission requests")
	for _, p := range ed.PermissionRequests() {
		lines = append(lines, "permission: "+p.ToolCall.Title)
	}
	out := strings.Join(lines, "\n") + "\n"
	return strings.ReplaceAll(out, root, "$ROOT")
}

// run plays the scenario against one agentd and checks the outcome.
func (sc *scenario) run(t *testing.T, binary bool, start func(t *testing.T, ed fakeeditor.Options, scriptPath, stateDir string) *fakeeditor.Editor) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The session's cwd is base/work; "additional" names more roots relative to it (../extra),
	// and files may be placed there with the same relative names.
	root := filepath.Join(base, "work")
	var additional []string
	for _, rel := range append([]string{"."}, strings.Fields(sc.config["additional"])...) {
		d := filepath.Join(root, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if rel != "." {
			additional = append(additional, d)
		}
	}
	for rel, text := range sc.files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scriptPath := filepath.Join(t.TempDir(), "replay.json")
	if err := os.WriteFile(scriptPath, sc.script, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := sc.editorOptions(t)
	answers := strings.Fields(sc.config["permissions"])
	var ed *fakeeditor.Editor
	if len(sc.user) > 0 {
		// The user types into the buffers while the first permission prompt is up, so the edit
		// agentd computed is stale by the time it is allowed.
		var mu sync.Mutex
		typed := false
		opts.Permission = func(p protocol.RequestPermissionParams) protocol.PermissionOutcome {
			mu.Lock()
			defer mu.Unlock()
			if !typed {
				typed = true
				for rel, text := range sc.user {
					ed.Edit(filepath.Join(root, rel), text)
				}
			}
			if len(answers) == 0 {
				t.Errorf("permission request %q beyond the scripted answers", p.ToolCall.Title)
				return protocol.PermissionOutcome{Outcome: "cancelled"}
			}
			a := answers[0]
			answers = answers[1:]
			return protocol.PermissionOutcome{Outcome: "selected", OptionID: a}
		}
	}
	if sc.config["cancel"] == "permission" {
		// The user presses stop while the permission prompt is up: the editor sends
		// agent/session/cancel and then answers its pending prompt cancelled, as the contract asks.
		opts.Permission = func(p protocol.RequestPermissionParams) protocol.PermissionOutcome {
			if err := ed.Notify(context.Background(), protocol.MethodSessionCancel, protocol.SessionIDParams{SessionID: p.SessionID}); err != nil {
				t.Errorf("cancel: %v", err)
			}
			return protocol.PermissionOutcome{Outcome: "cancelled"}
		}
	}
	ed = start(t, opts, scriptPath, t.TempDir())
	for _, rel := range strings.Fields(sc.config["open"]) {
		ed.OpenFile(filepath.Join(root, rel))
	}
	if sc.diags != nil {
		var ds map[string][]editorbridge.Diagnostic
		if err := json.Unmarshal(sc.diags, &ds); err != nil {
			t.Fatalf("diagnostics.json: %v", err)
		}
		for rel, d := range ds {
			ed.SetDiagnostics(filepath.Join(root, rel), d)
		}
	}
	if sc.symbols != nil {
		var syms []editorbridge.WorkspaceSymbol
		if err := json.Unmarshal(sc.symbols, &syms); err != nil {
			t.Fatalf("symbols.json: %v", err)
		}
		for i := range syms {
			syms[i].Location.URI = editorbridge.FileURI(filepath.Join(root, syms[i].Location.URI))
		}
		ed.SetSymbols(syms)
	}
	if sc.state != nil {
		var st protocol.EditorStateResult
		if err := json.Unmarshal(sc.state, &st); err != nil {
			t.Fatalf("editor_state.json: %v", err)
		}
		abs := func(rel string) string {
			if rel == "" || filepath.IsAbs(rel) {
				return rel
			}
			return filepath.Join(root, rel)
		}
		st.ActiveFile = abs(st.ActiveFile)
		if st.Selection != nil {
			st.Selection.Path = abs(st.Selection.Path)
		}
		for i, p := range st.OpenFiles {
			st.OpenFiles[i] = abs(p)
		}
		ed.SetEditorState(st)
	}
	if len(sc.user) == 0 && len(answers) > 0 {
		ed.AnswerPermissions(answers...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ed.Initialize(ctx, root); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	ns, err := ed.NewSession(ctx, root, additional...)
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if mode := sc.config["mode"]; mode != "" {
		var res protocol.SetConfigOptionResult
		if err := ed.Call(ctx, protocol.MethodSessionSetConfigOption, protocol.SetConfigOptionParams{
			SessionID: ns.SessionID, ConfigID: "mode", Value: mode}, &res); err != nil {
			t.Fatalf("set mode %s: %v", mode, err)
		}
	}
	res, err := ed.Prompt(ctx, ns.SessionID, sc.config["prompt"])
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if want := sc.config["stop"]; want != "" && res.StopReason != want {
		t.Errorf("stopReason = %q, want %q (meta %v)", res.StopReason, want, res.Meta)
	}
	for rel, want := range sc.want {
		got, ok := ed.Lookup(filepath.Join(root, rel))
		if !ok {
			t.Errorf("%s does not exist at the end", rel)
		} else if got != want {
			t.Errorf("%s at the end:\n%s\nwant:\n%s", rel, got, want)
		}
	}
	for _, o := range sc.outputs {
		if got := callOutput(ed, o[0]); !strings.Contains(got, o[1]) {
			t.Errorf("call %s output does not contain %q:\n%s", o[0], o[1], got)
		}
	}
	for rel, want := range sc.disk {
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Errorf("%s on disk: %v", rel, err)
		} else if string(got) != want {
			t.Errorf("%s on disk:\n%s\nwant:\n%s", rel, got, want)
		}
	}
	for _, rel := range sc.absent {
		if _, ok := ed.Lookup(filepath.Join(root, rel)); ok {
			t.Errorf("%s still exists at the end", rel)
		}
	}
	got := strings.ReplaceAll(transcript(ed, root), base, "$BASE")
	if *update {
		sc.rewriteGolden(t, got)
		return
	}
	if got != sc.golden {
		t.Errorf("transcript differs (run with -update to accept):\n--- got\n%s--- want\n%s", got, sc.golden)
	}
}

// callOutput is the text content of the final update of the tool call the script named id (the
// engine suffixes the ids it is given).
func callOutput(ed *fakeeditor.Editor, id string) string {
	var out string
	for _, n := range ed.Updates() {
		u := n.Update
		if u.SessionUpdate != protocol.UpdateToolCallUpdate || (u.ToolCallID != id && !strings.HasPrefix(u.ToolCallID, id+"_")) {
			continue
		}
		if u.Status != protocol.StatusCompleted && u.Status != protocol.StatusFailed {
			continue
		}
		for _, c := range u.ToolContent {
			if c.Content != nil {
				out += c.Content.Text
			}
		}
	}
	return out
}

var goldenMu sync.Mutex

func (sc *scenario) rewriteGolden(t *testing.T, got string) {
	goldenMu.Lock()
	defer goldenMu.Unlock()
	a, err := txtar.ParseFile(sc.file)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range a.Files {
		if a.Files[i].Name == "updates" {
			a.Files[i].Data = []byte(got)
			found = true
		}
	}
	if !found {
		a.Files = append(a.Files, txtar.File{Name: "updates", Data: []byte(got)})
	}
	if err := os.WriteFile(sc.file, txtar.Format(a), 0o644); err != nil {
		t.Fatal(err)
	}
}

func scenarioFiles(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenarios in %s", scenarioDir)
	}
	return files
}

// ---- in-process ----

// scriptSource serves every provider request from one replay script.
type scriptSource struct{ p providers.Provider }

func (s scriptSource) Provider(context.Context, string) (providers.Provider, providers.Config, error) {
	return s.p, providers.Config{ID: "replay", APIType: replay.APIType, Model: "replay"}, nil
}

func startInProcess(t *testing.T, opts fakeeditor.Options, scriptPath, stateDir string) *fakeeditor.Editor {
	script, err := replay.Load(scriptPath)
	if err != nil {
		t.Fatal(err)
	}
	edEnd, agentEnd := fakeeditor.Pipe()
	ed := fakeeditor.New(t, edEnd, opts)
	srv := rpc.NewServer(rpc.Options{
		Version:  "scenario",
		Logger:   zap.NewNop(),
		Tools:    tools.Default(),
		StateDir: stateDir,
		NewSessions: func(d session.Deps) rpc.Sessions {
			d.Providers = scriptSource{replay.NewFromScript(script)}
			return session.NewManager(d)
		},
	})
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(context.Background(), agentEnd, agentEnd)
	}()
	t.Cleanup(func() {
		agentEnd.Close()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop within 10s of its input closing")
		}
	})
	return ed
}

func TestScenarioInProcess(t *testing.T) {
	for _, file := range scenarioFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			loadScenario(t, file).run(t, false, startInProcess)
		})
	}
}

// ---- the built binary ----

// agentdBinary is cmd/agentd built by internal/test/testbin, once for every package that needs it.
func agentdBinary(t *testing.T) string {
	bin, err := testbin.Agentd(false)
	if err != nil {
		// A daemon that does not build is a failure, not a scenario to skip.
		t.Fatalf("cannot build the agentd binary: %v", err)
	}
	return bin
}

// stdioRW joins the child's stdout (read) and stdin (write).
type stdioRW struct {
	io.ReadCloser
	w io.WriteCloser
}

func (s stdioRW) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s stdioRW) Close() error {
	err := s.w.Close()
	s.ReadCloser.Close()
	return err
}

func startBinary(t *testing.T, opts fakeeditor.Options, scriptPath, stateDir string) *fakeeditor.Editor {
	bin := agentdBinary(t)
	home := t.TempDir()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+stateDir,
		"ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "GEMINI_API_KEY=", "AGENTD_SECRET_STORE=file")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	settings, _ := json.Marshal(map[string]any{
		"provider":  "replay",
		"providers": map[string]any{"replay": map[string]any{"apiType": replay.APIType, "baseUrl": editorbridge.FileURI(scriptPath), "model": "replay"}},
	})
	opts.Settings = settings
	ed := fakeeditor.New(t, stdioRW{ReadCloser: stdout, w: stdin}, opts)
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("agentd did not exit within 10s of its stdin closing")
		}
		if t.Failed() {
			t.Logf("agentd stderr:\n%s", stderr.String())
		}
	})
	return ed
}

func TestScenarioBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped in -short")
	}
	for _, file := range scenarioFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			sc := loadScenario(t, file)
			if *update {
				t.Skip("goldens are written by the in-process run")
			}
			sc.run(t, true, startBinary)
		})
	}
}
