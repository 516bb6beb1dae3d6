package session_test

// Restore through the fake editor: real tools make a turn's changes with workspace/applyEdit,
// agent/x/checkpoints/restore undoes them through the editor bridge, and the editor's buffers
// and the disk are checked. The package is external so it may use editorbridge, as rpc does.

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// call is one tool call of a scripted reply.
type call struct {
	name string
	args map[string]any
}

// script answers each tool-using model request with its next reply: calls, then (when the
// calls' results come back) a short text, turn after turn. Requests are kept.
type script struct {
	mu    sync.Mutex
	turns [][]call
	reqs  []*providers.Request
	// step, when set, runs at the start of every tool-using request.
	step func(n int)
}

func (s *script) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		if len(req.Tools) == 0 { // a title request
			if yield(providers.Event{Type: providers.EventTextDelta, Text: "Title"}) {
				yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
			}
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		n := len(s.reqs)
		last := req.Messages[len(req.Messages)-1]
		var calls []call
		answering := false
		for _, p := range last.Parts {
			answering = answering || p.Type == providers.PartToolResult
		}
		if !answering && len(s.turns) > 0 {
			calls, s.turns = s.turns[0], s.turns[1:]
		}
		step := s.step
		s.mu.Unlock()
		if step != nil {
			step(n)
		}
		if len(calls) == 0 {
			if yield(providers.Event{Type: providers.EventTextDelta, Text: "done"}) {
				yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
			}
			return
		}
		for i, c := range calls {
			args, _ := json.Marshal(c.args)
			id := "call_" + string(rune('a'+n)) + string(rune('a'+i))
			if !yield(providers.Event{Type: providers.EventToolCallStarted, Index: i, ToolCallID: id, ToolName: c.name}) ||
				!yield(providers.Event{Type: providers.EventToolCallCompleted, Index: i, ToolCallID: id, ToolName: c.name, Args: args}) {
				return
			}
		}
		yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopToolUse})
	}
}

func (s *script) requests() []*providers.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func (s *script) Provider(context.Context, string) (providers.Provider, providers.Config, error) {
	return s, providers.Config{ID: "script", APIType: "script", Model: "script"}, nil
}

type restoreEnv struct {
	t      *testing.T
	root   string
	state  string
	ed     *fakeeditor.Editor
	bridge *editorbridge.Bridge
	prov   *script
	m      *session.Manager
	sid    string
}

func newRestoreEnv(t *testing.T, opts fakeeditor.Options, turns ...[]call) *restoreEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &restoreEnv{t: t, root: root, state: t.TempDir(), prov: &script{turns: turns}}
	edEnd, agentEnd := fakeeditor.Pipe()
	e.ed = fakeeditor.New(t, edEnd, opts)
	conn := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	conn.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	t.Cleanup(func() { conn.Close() })
	e.bridge = editorbridge.New(conn, e.ed.BridgeCapabilities(), zap.NewNop())
	e.m = e.manager(e.state)
	return e
}

func (e *restoreEnv) manager(state string) *session.Manager {
	m := session.NewManager(session.Deps{
		Client:     e.bridge.Client(),
		Workspaces: e.bridge.Workspace,
		Providers:  e.prov,
		Tools:      tools.Default(),
		Settings:   func() config.Settings { return config.Settings{Mode: config.ModeAuto} },
		StateDir:   state,
		NoTitles:   true,
	})
	e.t.Cleanup(func() { _ = m.Shutdown(context.Background()) })
	return m
}

func (e *restoreEnv) path(rel string) string { return filepath.Join(e.root, rel) }

func (e *restoreEnv) write(rel, text string) string {
	e.t.Helper()
	p := e.path(rel)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *restoreEnv) newSession() {
	e.t.Helper()
	res, err := e.m.New(context.Background(), protocol.SessionNewParams{Cwd: e.root})
	if err != nil {
		e.t.Fatal(err)
	}
	e.sid = res.SessionID
}

func (e *restoreEnv) prompt(text string) protocol.PromptResult {
	e.t.Helper()
	res, err := e.m.Prompt(context.Background(), protocol.PromptParams{SessionID: e.sid, Prompt: []protocol.ContentBlock{protocol.TextBlock(text)}})
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// checkpoint returns the id of the i-th checkpoint, oldest first.
func (e *restoreEnv) checkpoint(i int) string {
	e.t.Helper()
	res, err := e.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: e.sid})
	if err != nil {
		e.t.Fatal(err)
	}
	if i >= len(res.Checkpoints) {
		e.t.Fatalf("no checkpoint %d: %+v", i, res.Checkpoints)
	}
	return res.Checkpoints[len(res.Checkpoints)-1-i].CheckpointID
}

func (e *restoreEnv) restore(id, what string) protocol.CheckpointRestoreResult {
	e.t.Helper()
	res, err := e.m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: e.sid, CheckpointID: id, Restore: what})
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

// applyEdits counts the workspace/applyEdit requests the editor received.
func (e *restoreEnv) applyEdits() int {
	n := 0
	for _, r := range e.ed.Requests() {
		if r.Method == protocol.MethodApplyEdit {
			n++
		}
	}
	return n
}

// text is what the user sees at rel; "<none>" when the file is neither open nor on disk.
func (e *restoreEnv) text(rel string) string {
	if s, ok := e.ed.Lookup(e.path(rel)); ok {
		return s
	}
	return "<none>"
}

func (e *restoreEnv) wantFiles(got protocol.CheckpointRestoreResult, want ...protocol.RestoredFile) {
	e.t.Helper()
	for i := range want {
		want[i].Path = e.path(want[i].Path)
	}
	if len(got.Files) != len(want) {
		e.t.Fatalf("files %+v, want %+v", got.Files, want)
	}
	for i, w := range want {
		g := got.Files[i]
		if g.Path != w.Path || g.Restored != w.Restored || (w.Reason != "" && !strings.Contains(g.Reason, w.Reason)) || (w.Restored && g.Reason != "") {
			e.t.Fatalf("files %+v, want %+v", got.Files, want)
		}
	}
}

// userTypes replaces old with new in rel as the user typing in the editor.
func (e *restoreEnv) userTypes(rel, old, new string) string {
	e.t.Helper()
	p := e.path(rel)
	text := strings.Replace(e.text(rel), old, new, 1)
	if _, open := e.ed.Version(p); open {
		e.ed.Edit(p, text)
	} else {
		e.ed.Open(p, text)
	}
	return text
}

// userSets sets rel's buffer text as the user typing.
func (e *restoreEnv) userSets(rel, text string) {
	e.t.Helper()
	p := e.path(rel)
	if _, open := e.ed.Version(p); open {
		e.ed.Edit(p, text)
	} else {
		e.ed.Open(p, text)
	}
}

func edit(path, old, new string) call {
	return call{"edit_file", map[string]any{"path": path, "edits": []map[string]any{{"old_text": old, "new_text": new}}}}
}
func create(path, content string) call {
	return call{"create_file", map[string]any{"path": path, "content": content}}
}
func remove(path string) call { return call{"delete_path", map[string]any{"path": path}} }
func move(path, to string) call {
	return call{"move_path", map[string]any{"path": path, "destination": to}}
}

const five = "one\ntwo\nthree\nfour\nfive\n"

func TestRestoreEachKindOfChangeWithOneEdit(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(), []call{edit("a.txt", "one", "ONE"), create("new.txt", "fresh\n"), remove("b.txt"), move("c.txt", "d.txt")})
	e.write("a.txt", five)
	e.write("b.txt", "bravo\n")
	e.write("c.txt", "charlie\n")
	e.newSession()
	e.prompt("change things")
	if e.text("a.txt") != strings.Replace(five, "one", "ONE", 1) || e.text("new.txt") != "fresh\n" || e.text("b.txt") != "<none>" || e.text("d.txt") != "charlie\n" {
		t.Fatalf("the turn did not make its changes: a=%q new=%q b=%q d=%q", e.text("a.txt"), e.text("new.txt"), e.text("b.txt"), e.text("d.txt"))
	}
	before := e.applyEdits()
	res := e.restore(e.checkpoint(0), protocol.RestoreFiles)
	if n := e.applyEdits() - before; n != 1 {
		t.Fatalf("the restore sent %d workspace/applyEdit requests, want 1", n)
	}
	e.wantFiles(res,
		protocol.RestoredFile{Path: "a.txt", Restored: true},
		protocol.RestoredFile{Path: "b.txt", Restored: true},
		protocol.RestoredFile{Path: "c.txt", Restored: true},
		protocol.RestoredFile{Path: "new.txt", Restored: true},
	)
	for rel, want := range map[string]string{"a.txt": five, "b.txt": "bravo\n", "c.txt": "charlie\n", "d.txt": "<none>", "new.txt": "<none>"} {
		if got := e.text(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	// The renamed file is renamed back, not deleted and created anew.
	edits := e.ed.AppliedEdits()
	raw, _ := json.Marshal(edits[len(edits)-1])
	if !strings.Contains(string(raw), `"kind":"rename"`) {
		t.Fatalf("the restore did not rename back: %s", raw)
	}
}

func TestRestoreKeepsTheUsersOwnChange(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(), []call{edit("a.txt", "one", "ONE")})
	e.write("a.txt", five)
	e.newSession()
	e.prompt("shout")
	e.userTypes("a.txt", "five", "FIVE (the user's)")
	res := e.restore(e.checkpoint(0), protocol.RestoreFiles)
	e.wantFiles(res, protocol.RestoredFile{Path: "a.txt", Restored: true})
	if got, want := e.text("a.txt"), strings.Replace(five, "five", "FIVE (the user's)", 1); got != want {
		t.Fatalf("a.txt = %q, want %q", got, want)
	}
}

func TestRestoreRefusesToOverwriteAnOverlappingUserChange(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(), []call{edit("a.txt", "one", "ONE"), create("n.txt", "made\n")})
	e.write("a.txt", five)
	e.newSession()
	e.prompt("shout")
	users := e.userTypes("a.txt", "ONE", "ONE, said the user")
	e.userSets("n.txt", "made, then the user wrote here\n")
	res := e.restore(e.checkpoint(0), protocol.RestoreFiles)
	e.wantFiles(res,
		protocol.RestoredFile{Path: "a.txt", Restored: false, Reason: "changed since agentd's edit"},
		protocol.RestoredFile{Path: "n.txt", Restored: false, Reason: "changed since agentd created it"},
	)
	if e.text("a.txt") != users || e.text("n.txt") != "made, then the user wrote here\n" {
		t.Fatalf("the user's text was touched: a=%q n=%q", e.text("a.txt"), e.text("n.txt"))
	}
}

func TestRestoreTheEditorRefusesChangesNothing(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(), []call{edit("a.txt", "one", "ONE"), create("n.txt", "made\n")})
	e.write("a.txt", five)
	e.newSession()
	e.prompt("shout")
	e.ed.RefuseEdits("the user said no")
	res := e.restore(e.checkpoint(0), protocol.RestoreFiles)
	e.wantFiles(res,
		protocol.RestoredFile{Path: "a.txt", Restored: false, Reason: "the user said no"},
		protocol.RestoredFile{Path: "n.txt", Restored: false, Reason: "the user said no"},
	)
	if e.text("a.txt") != strings.Replace(five, "one", "ONE", 1) || e.text("n.txt") != "made\n" {
		t.Fatalf("half applied: a=%q n=%q", e.text("a.txt"), e.text("n.txt"))
	}
	// Nothing was restored, so /undo still has that turn to undo.
	e.ed.RefuseEdits("")
	e.prompt("/undo")
	if e.text("a.txt") != five || e.text("n.txt") != "<none>" {
		t.Fatalf("/undo after a refusal: a=%q n=%q", e.text("a.txt"), e.text("n.txt"))
	}
}

func TestRestoreAnOlderCheckpointUndoesTheLaterTurns(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(),
		[]call{edit("a.txt", "one", "ONE"), create("n.txt", "new\n")},
		[]call{edit("a.txt", "three", "THREE"), move("n.txt", "m.txt"), remove("b.txt"), create("z.txt", "zed\n")},
	)
	e.write("a.txt", five)
	e.write("b.txt", "bravo\n")
	e.newSession()
	e.prompt("first")
	// Between the turns the user changes a line agentd does not touch.
	e.userTypes("a.txt", "five", "5")
	e.prompt("second")
	if e.text("a.txt") != "ONE\ntwo\nTHREE\nfour\n5\n" || e.text("m.txt") != "new\n" {
		t.Fatalf("turns did not run: a=%q m=%q", e.text("a.txt"), e.text("m.txt"))
	}
	before := e.applyEdits()
	res := e.restore(e.checkpoint(0), protocol.RestoreFiles)
	if n := e.applyEdits() - before; n != 1 {
		t.Fatalf("%d applyEdit requests, want 1", n)
	}
	e.wantFiles(res,
		protocol.RestoredFile{Path: "a.txt", Restored: true},
		protocol.RestoredFile{Path: "b.txt", Restored: true},
		protocol.RestoredFile{Path: "m.txt", Restored: true},
		protocol.RestoredFile{Path: "z.txt", Restored: true},
	)
	for rel, want := range map[string]string{"a.txt": "one\ntwo\nthree\nfour\n5\n", "b.txt": "bravo\n", "n.txt": "<none>", "m.txt": "<none>", "z.txt": "<none>"} {
		if got := e.text(rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
}

func TestRestoreWhileATurnRunsIsRefused(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(), []call{edit("a.txt", "one", "ONE")}, []call{edit("a.txt", "two", "TWO")})
	e.write("a.txt", five)
	e.newSession()
	e.prompt("first")
	id := e.checkpoint(0)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	e.prov.step = func(n int) {
		if n == 3 {
			entered <- struct{}{}
			<-release
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); e.prompt("second") }()
	<-entered
	_, err := e.m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: e.sid, CheckpointID: id, Restore: protocol.RestoreBoth})
	close(release)
	<-done
	if !errors.Is(err, session.ErrBusy) {
		t.Fatalf("restore during a turn: %v", err)
	}
	if e.text("a.txt") != "ONE\nTWO\nthree\nfour\nfive\n" {
		t.Fatalf("a.txt = %q", e.text("a.txt"))
	}
}

// TestRestoreAfterACrashBetweenCheckpointAndEdit restores from what a kill -9 leaves: a copy of
// the state directory taken while the editor held the edit (the checkpoint saved, the edit not
// applied), and one taken after the edit applied but before the turn ended (no post-image).
func TestRestoreAfterACrashBetweenCheckpointAndEdit(t *testing.T) {
	opts := fakeeditor.Full()
	e := newRestoreEnv(t, opts, []call{edit("a.txt", "one", "ONE")})
	e.write("a.txt", five)
	beforeEdit, afterEdit := t.TempDir(), t.TempDir()
	e.prov.step = func(n int) {
		if n == 2 { // the edit's result goes back to the model: the edit applied, the turn goes on
			if err := os.CopyFS(afterEdit, os.DirFS(e.state)); err != nil {
				t.Error(err)
			}
		}
	}
	// Copy the state inside the editor's hands: the checkpoint is saved before the edit is sent.
	snapshot := func() {
		if err := os.CopyFS(beforeEdit, os.DirFS(e.state)); err != nil {
			t.Error(err)
		}
	}
	_ = e.m.Shutdown(context.Background())
	e.m = session.NewManager(session.Deps{
		Client: e.bridge.Client(),
		Workspaces: func(id string, r *workspace.Roots) workspace.Workspace {
			return snapshotWS{e.bridge.Workspace(id, r), snapshot}
		},
		Providers: e.prov,
		Tools:     tools.Default(),
		Settings:  func() config.Settings { return config.Settings{Mode: config.ModeAuto} },
		StateDir:  e.state,
		NoTitles:  true,
	})
	t.Cleanup(func() { _ = e.m.Shutdown(context.Background()) })
	e.newSession()
	e.prompt("shout")
	if e.text("a.txt") != "ONE\ntwo\nthree\nfour\nfive\n" {
		t.Fatalf("a.txt = %q", e.text("a.txt"))
	}
	for _, c := range []struct {
		name, state string
		text        string // a.txt as the crash left it
		want        protocol.RestoredFile
		wantText    string
	}{
		{"before the edit", beforeEdit, five, protocol.RestoredFile{Path: "a.txt", Restored: true}, five},
		{"after the edit", afterEdit, "ONE\ntwo\nthree\nfour\nfive\n", protocol.RestoredFile{Path: "a.txt", Restored: false, Reason: "agentd stopped during that turn"}, "ONE\ntwo\nthree\nfour\nfive\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.userSets("a.txt", c.text)
			m := e.manager(c.state)
			if _, err := m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: e.sid, Cwd: e.root}); err != nil {
				t.Fatal(err)
			}
			list, _ := m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: e.sid})
			if len(list.Checkpoints) != 1 {
				t.Fatalf("the crash left checkpoints %+v", list)
			}
			before := e.applyEdits()
			res, err := m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: e.sid, CheckpointID: list.Checkpoints[0].CheckpointID, Restore: protocol.RestoreFiles})
			if err != nil {
				t.Fatal(err)
			}
			e.wantFiles(res, c.want)
			if n := e.applyEdits() - before; n != 0 {
				t.Fatalf("%d applyEdit requests for nothing to change", n)
			}
			if got := e.text("a.txt"); got != c.wantText {
				t.Fatalf("a.txt = %q", got)
			}
		})
	}
}

// snapshotWS runs snap before each edit is applied.
type snapshotWS struct {
	workspace.Workspace
	snap func()
}

func (w snapshotWS) ApplyEdit(ctx context.Context, label string, changes []workspace.Change) error {
	w.snap()
	return w.Workspace.ApplyEdit(ctx, label, changes)
}

func TestConversationRestoreSurvivesAReload(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(), nil, []call{edit("a.txt", "one", "ONE")}, nil)
	e.write("a.txt", five)
	e.newSession()
	e.prompt("keep this")
	e.prompt("drop this")
	res := e.restore(e.checkpoint(0), protocol.RestoreBoth)
	e.wantFiles(res, protocol.RestoredFile{Path: "a.txt", Restored: true})
	if e.text("a.txt") != five {
		t.Fatalf("a.txt = %q", e.text("a.txt"))
	}
	// A new daemon loads the shorter conversation: the replay stops before "drop this" and the
	// model's next request holds only the first exchange.
	_ = e.m.Shutdown(context.Background())
	e.m = e.manager(e.state)
	mark := len(e.ed.Updates())
	if _, err := e.m.Load(context.Background(), protocol.SessionLoadParams{SessionID: e.sid, Cwd: e.root}); err != nil {
		t.Fatal(err)
	}
	// available_commands_update follows the replay.
	e.ed.Wait("the replay", func() bool {
		for _, n := range e.ed.Updates()[mark:] {
			if n.Update.SessionUpdate == protocol.UpdateAvailableCommandsUpdate {
				return true
			}
		}
		return false
	})
	var replayed []string
	for _, n := range e.ed.Updates()[mark:] {
		if u := n.Update; u.SessionUpdate == protocol.UpdateUserMessageChunk && u.Content != nil {
			replayed = append(replayed, u.Content.Text)
		}
	}
	if !slices.Equal(replayed, []string{"keep this"}) {
		t.Fatalf("replayed user messages %q", replayed)
	}
	e.prompt("after")
	reqs := e.prov.requests()
	var users []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == providers.RoleUser && len(m.Parts) > 0 {
			users = append(users, m.Parts[0].Text)
		}
	}
	if !slices.Equal(users, []string{"keep this", "after"}) {
		t.Fatalf("the model saw the user messages %q", users)
	}
	// The dropped turn's conversation cannot be dropped again.
	_, err := e.m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: e.sid, CheckpointID: e.checkpoint(0), Restore: protocol.RestoreConversation})
	var pe *session.ParamError
	if !errors.As(err, &pe) || pe.Field != "restore" {
		t.Fatalf("dropping a dropped turn: %v", err)
	}
}

func TestTheModelIsToldOfTheUsersChangesOnce(t *testing.T) {
	e := newRestoreEnv(t, fakeeditor.Full(), []call{edit("a.txt", "one", "ONE")}, nil, nil)
	p := e.write("a.txt", five)
	e.newSession()
	e.prompt("shout")
	e.userTypes("a.txt", "four", "FOUR by hand")
	e.prompt("next")
	e.prompt("and next")
	reqs := e.prov.requests()
	told := func(r *providers.Request) string {
		var out []string
		for _, m := range r.Messages {
			for _, part := range m.Parts {
				if strings.Contains(part.Text, "The user changed files you edited") {
					out = append(out, part.Text)
				}
			}
		}
		return strings.Join(out, "\n---\n")
	}
	next, last := told(reqs[len(reqs)-2]), told(reqs[len(reqs)-1])
	if !strings.Contains(next, p) || !strings.Contains(next, "-four") || !strings.Contains(next, "+FOUR by hand") || strings.Contains(next, "ONE") {
		t.Fatalf("the next turn was told %q", next)
	}
	if last != next {
		t.Fatalf("the change was told again in a later turn: %q", last)
	}
}

// The post-image is saved trimmed to what the turn changed; a new daemon rebuilds it and still
// merges the user's change.
func TestRestoreAfterAReloadUsesTheSavedPostImage(t *testing.T) {
	big := strings.Repeat("filler line\n", 500)
	e := newRestoreEnv(t, fakeeditor.Full(), []call{edit("a.txt", "middle", "MIDDLE"), create("n.txt", "new\n")})
	e.write("a.txt", big+"middle\n"+big+"end\n")
	e.newSession()
	e.prompt("shout")
	_ = e.m.Shutdown(context.Background())
	e.m = e.manager(e.state)
	if _, err := e.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: e.sid, Cwd: e.root}); err != nil {
		t.Fatal(err)
	}
	e.userTypes("a.txt", "end", "END by the user")
	res := e.restore(e.checkpoint(0), protocol.RestoreFiles)
	e.wantFiles(res, protocol.RestoredFile{Path: "a.txt", Restored: true}, protocol.RestoredFile{Path: "n.txt", Restored: true})
	if got, want := e.text("a.txt"), big+"middle\n"+big+"END by the user\n"; got != want {
		t.Fatalf("a.txt ends %q", got[len(got)-40:])
	}
	if e.text("n.txt") != "<none>" {
		t.Fatal("n.txt not deleted")
	}
}
