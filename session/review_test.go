package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/workspace"
)

func TestRejectWithInstructionReachesModelVerbatim(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("using a map")})
	const instruction = "No — use a map.\n{{NOT_A_TEMPLATE}} keep \"quotes\""
	h.client.answer = func(context.Context, protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: protocol.OptionRejectOnce,
			Meta: protocol.Meta{protocol.MetaInstruction: instruction}}}, nil
	}
	h.newSession()
	if res := h.prompt("edit"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("file changed: %q", got)
	}
	reqs := h.prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("the turn did not go on: %d model requests", len(reqs))
	}
	trs := toolResults(reqs[1].Messages)
	want := h.m.text("approval.corrected_with_instruction", map[string]any{"INSTRUCTION": instruction})
	if len(trs) != 1 || !trs[0].IsError || trs[0].Text != want || !strings.Contains(trs[0].Text, instruction) {
		t.Fatalf("model saw %+v, want %q", trs, want)
	}
}

func TestRejectWithBlankInstructionIsAPlainRejection(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("ok")})
	h.client.answer = func(context.Context, protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "selected", OptionID: protocol.OptionRejectOnce,
			Meta: protocol.Meta{protocol.MetaInstruction: "  "}}}, nil
	}
	h.newSession()
	h.prompt("edit")
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 1 || trs[0].Text != h.m.text("approval.rejected", nil) {
		t.Fatalf("model saw %+v", trs)
	}
}

// fakeTimers stands in for time.AfterFunc: fire runs the timers started so far.
type fakeTimers struct {
	mu      sync.Mutex
	d       []time.Duration
	fns     []func()
	armed   chan struct{}
	stopped int
}

func (f *fakeTimers) afterFunc(d time.Duration, fn func()) func() {
	f.mu.Lock()
	f.d = append(f.d, d)
	f.fns = append(f.fns, fn)
	f.mu.Unlock()
	f.armed <- struct{}{}
	return func() {
		f.mu.Lock()
		f.stopped++
		f.mu.Unlock()
	}
}

func TestUnansweredPermissionTimesOutAsDenial(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("going on without it")})
	timers := &fakeTimers{armed: make(chan struct{}, 1)}
	h.m.afterFunc = timers.afterFunc
	cancelled := make(chan struct{})
	h.client.answer = func(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error) {
		<-ctx.Done() // the user never answers; the request is withdrawn
		close(cancelled)
		return protocol.RequestPermissionResult{Outcome: protocol.PermissionOutcome{Outcome: "cancelled"}}, ctx.Err()
	}
	h.newSession()
	done := h.promptAsync(context.Background(), "edit")
	<-timers.armed
	h.client.waitPermission(t, 1)
	timers.mu.Lock()
	if len(timers.d) != 1 || timers.d[0] != 30*time.Minute {
		t.Fatalf("timer durations %v", timers.d)
	}
	fire := timers.fns[0]
	timers.mu.Unlock()
	fire()
	res := waitResult(t, done, 5*time.Second)
	if res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	<-cancelled
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("file changed: %q", got)
	}
	trs := toolResults(h.prov.requests()[1].Messages)
	if len(trs) != 1 || !trs[0].IsError || trs[0].Text != h.m.text("approval.timed_out", nil) {
		t.Fatalf("model saw %+v", trs)
	}
	if st := finalStatus(h.client.snapshot(), "e1"); st != protocol.StatusFailed {
		t.Fatalf("status %q", st)
	}
}

func TestAnsweredPermissionStopsItsTimer(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")})
	timers := &fakeTimers{armed: make(chan struct{}, 1)}
	h.m.afterFunc = timers.afterFunc
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.newSession()
	h.prompt("edit")
	timers.mu.Lock()
	defer timers.mu.Unlock()
	if len(timers.fns) != 1 || timers.stopped != 1 {
		t.Fatalf("timers started %d, stopped %d", len(timers.fns), timers.stopped)
	}
	if got := h.ws.file(h.path("a.txt")); got != "ALPHA\n" {
		t.Fatalf("file = %q", got)
	}
}

func TestPromptAnswerListsTheTurnsChanges(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA\\nmore"), reply{events: textReply("done")}, reply{events: textReply("nothing")})
	h.set.Mode = ModeAuto
	h.newSession()
	res := h.prompt("edit")
	got, _ := res.Meta[protocol.MetaChanges].([]protocol.FileChange)
	want := []protocol.FileChange{{Path: h.path("a.txt"), Change: "modified", Added: 2, Removed: 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("changes = %+v, want %+v", res.Meta[protocol.MetaChanges], want)
	}
	if res := h.prompt("nothing"); res.Meta[protocol.MetaChanges] != nil {
		t.Fatalf("a turn that changed nothing lists %v", res.Meta[protocol.MetaChanges])
	}
}

func TestTurnChangesFollowCreateDeleteRename(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, d := write("a.txt", "1\n2\n3\n"), write("b.txt", "x\ny\n"), write("d.txt", "dee\n")
	c, e, tmp := filepath.Join(dir, "c.txt"), filepath.Join(dir, "e.txt"), filepath.Join(dir, "tmp.txt")
	tc := newTurnChanges()
	ws := recordingWS{Workspace: workspace.NewDisk(), tc: tc}
	ctx := context.Background()
	steps := [][]workspace.Change{
		{{Kind: workspace.ChangeEdit, Path: a, OldText: "1\n2\n3\n", NewText: "1\nTWO\n3\n4\n"}},
		{{Kind: workspace.ChangeCreate, Path: c, NewText: "new\n"}},
		{{Kind: workspace.ChangeDelete, Path: b}},
		{{Kind: workspace.ChangeRename, Path: d, NewPath: e}},
		// A file created and deleted in the same turn leaves no trace.
		{{Kind: workspace.ChangeCreate, Path: tmp, NewText: "t\n"}},
		{{Kind: workspace.ChangeDelete, Path: tmp}},
		// A second edit keeps the first pre-image.
		{{Kind: workspace.ChangeEdit, Path: a, OldText: "1\nTWO\n3\n4\n", NewText: "1\nTWO\n3\n4\n5\n"}},
	}
	for i, s := range steps {
		if err := ws.ApplyEdit(ctx, "step", s); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	got := wireChanges(tc.list())
	want := []protocol.FileChange{
		{Path: a, Change: "modified", Added: 3, Removed: 1},
		{Path: c, Change: "created", Added: 1},
		{Path: b, Change: "deleted", Removed: 2},
		{Path: e, Change: "renamed", From: d},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("changes\n got %+v\nwant %+v", got, want)
	}
	files := tc.list()
	if files[0].Before != "1\n2\n3\n" || files[2].Before != "x\ny\n" || !files[2].BeforeKnown || files[3].Before != "dee\n" {
		t.Fatalf("pre-images: %+v", files)
	}
}

func TestRefusedEditIsNotListed(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(a, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tc := newTurnChanges()
	ws := recordingWS{Workspace: workspace.NewDisk(), tc: tc}
	err := ws.ApplyEdit(context.Background(), "stale", []workspace.Change{{Kind: workspace.ChangeEdit, Path: a, OldText: "not what is there", NewText: "x"}})
	if err == nil {
		t.Fatal("a stale edit applied")
	}
	if l := tc.list(); len(l) != 0 {
		t.Fatalf("listed %+v", l)
	}
}

func TestForkCopiesHistoryAndLeavesTheSourceAlone(t *testing.T) {
	h := newHarness(t, reply{events: textReply("first answer")}, reply{events: textReply("side answer")}, reply{events: textReply("main answer")})
	src := h.newSession()
	h.prompt("main question")
	res, err := h.m.Fork(context.Background(), protocol.SessionForkParams{SessionID: src})
	if err != nil {
		t.Fatal(err)
	}
	if res.SessionID == "" || res.SessionID == src {
		t.Fatalf("fork id %q", res.SessionID)
	}
	h.sid = res.SessionID
	h.prompt("side question")
	h.sid = src
	h.prompt("main again")
	reqs := h.prov.requests()
	side, main := texts(reqs[1].Messages), texts(reqs[2].Messages)
	if want := "main question|first answer|side question"; side != want {
		t.Fatalf("the fork's model saw %q, want %q", side, want)
	}
	if want := "main question|first answer|main again"; main != want {
		t.Fatalf("the source's model saw %q, want %q", main, want)
	}

	// The fork is persisted: a new daemon loads it with its own history.
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: res.SessionID, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	s, _ := h.m.get(res.SessionID)
	if got := texts(s.historySnapshot()); got != "main question|first answer|side question|side answer" {
		t.Fatalf("reloaded fork history %q", got)
	}
}

func TestForkOfUnknownSessionFails(t *testing.T) {
	h := newHarness(t)
	if _, err := h.m.Fork(context.Background(), protocol.SessionForkParams{SessionID: "sess_nope"}); !errors.Is(err, ErrUnknownSession) {
		t.Fatalf("err = %v", err)
	}
	var pe *ParamError
	if _, err := h.m.Fork(context.Background(), protocol.SessionForkParams{SessionID: "x", Cwd: "relative"}); !errors.As(err, &pe) || pe.Field != "cwd" {
		t.Fatalf("err = %v", err)
	}
}

// texts joins the text parts of messages with |, leaving out the live context.
func texts(msgs []providers.Message) string {
	var out []string
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Type == providers.PartText && !strings.HasPrefix(p.Text, "<context>") {
				out = append(out, p.Text)
			}
		}
	}
	return strings.Join(out, "|")
}

func TestCheckpointSavedBeforeTheEditAndListed(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")})
	h.set.Mode = ModeAuto
	sid := h.newSession()
	// Inside the editor's ApplyEdit, before it applies: the pre-image must be on disk already.
	var sawBefore string
	h.ws.editHook = func(context.Context) error {
		names, _ := filepath.Glob(filepath.Join(h.state, "sessions", sid+".checkpoints", "*.log"))
		if len(names) == 1 {
			if cp, ok := readCheckpoint(names[0]); ok && len(cp.Files) == 1 {
				sawBefore = cp.Files[0].Before
			}
		}
		return nil
	}
	h.prompt("make it loud")
	if sawBefore != "alpha\n" {
		t.Fatalf("checkpoint on disk before the edit applied: %q", sawBefore)
	}
	res, err := h.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: sid})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checkpoints) != 1 || res.Checkpoints[0].Prompt != "make it loud" ||
		!slices.Equal(res.Checkpoints[0].Files, []protocol.CheckpointFile{{Path: h.path("a.txt"), Change: "modified"}}) {
		t.Fatalf("checkpoints %+v", res)
	}
	// Persisted with the session: a new daemon lists it after resume.
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: h.dir}); err != nil {
		t.Fatal(err)
	}
	again, _ := h.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: sid})
	if len(again.Checkpoints) != 1 || again.Checkpoints[0].CheckpointID != res.Checkpoints[0].CheckpointID {
		t.Fatalf("after reload %+v", again)
	}
	// Deleting the session deletes its checkpoints.
	if err := h.m.Delete(context.Background(), sid); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.state, "sessions", sid+".checkpoints")); !os.IsNotExist(err) {
		t.Fatalf("checkpoints left after delete: %v", err)
	}
}

func TestTurnWithoutChangesLeavesNoCheckpoint(t *testing.T) {
	h := newHarness(t, reply{events: textReply("hi")})
	sid := h.newSession()
	h.prompt("hello")
	res, _ := h.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: sid})
	if len(res.Checkpoints) != 0 {
		t.Fatalf("checkpoints %+v", res)
	}
}

func TestCheckpointsAreBounded(t *testing.T) {
	h := newHarness(t)
	sid := h.newSession()
	s, _ := h.m.get(sid)
	dir := s.checkpointDir()
	defer func(n int) { maxCheckpointBytes = n }(maxCheckpointBytes)
	maxCheckpointBytes = 3 << 10
	big := strings.Repeat("x", maxCheckpointBytes/3+1)
	for i := range maxCheckpoints + 5 {
		tr := &turn{s: s, changes: newTurnChanges()}
		tr.cp = &checkpoint{ID: fmt.Sprintf("cp_%02d", i), CreatedAt: time.Unix(int64(i), 0)}
		f := &fileChange{Path: fmt.Sprintf("/p/%d", i), Change: changeModified, BeforeKnown: true, origin: fmt.Sprintf("/p/%d", i)}
		if i >= maxCheckpoints {
			f.Before = big
		}
		tr.saveCheckpoint([]*fileChange{f})
		tr.closeCheckpoint()
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	s.mu.Lock()
	n := len(s.checkpoints)
	newest := s.checkpoints[n-1].ID
	s.mu.Unlock()
	// The three newest big ones pass the byte bound: only the two newest are kept.
	if n != 2 || len(names) != 2 || newest != fmt.Sprintf("cp_%02d", maxCheckpoints+4) {
		t.Fatalf("kept %d in memory, %d on disk, newest %s", n, len(names), newest)
	}
}
