package session

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

func TestMerge3(t *testing.T) {
	base := "a\nb\nc\nd\ne\nf\n"
	for name, tc := range map[string]struct {
		ours, theirs, want string
		ok                 bool
	}{
		"theirs unchanged":      {"a\nB\nc\nd\ne\nf\n", base, "a\nB\nc\nd\ne\nf\n", true},
		"apart":                 {"a\nB\nc\nd\ne\nf\n", "a\nb\nc\nd\nE\nf\n", "a\nB\nc\nd\nE\nf\n", true},
		"same change both":      {"a\nB\nc\nd\ne\nf\n", "a\nB\nc\nd\nE\nf\n", "a\nB\nc\nd\nE\nf\n", true},
		"overlap":               {"a\nB\nc\nd\ne\nf\n", "a\nX\nc\nd\ne\nf\n", "", false},
		"touching":              {"a\nB\nc\nd\ne\nf\n", "a\nb\nC\nd\ne\nf\n", "", false},
		"insert apart":          {"a\nb\nnew\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\nf\ng\n", "a\nb\nnew\nc\nd\ne\nf\ng\n", true},
		"both insert same spot": {"a\nx\nb\nc\nd\ne\nf\n", "a\ny\nb\nc\nd\ne\nf\n", "", false},
		"delete apart":          {"b\nc\nd\ne\nf\n", "a\nb\nc\nd\ne\n", "b\nc\nd\ne\n", true},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := merge3(base, tc.ours, tc.theirs)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("merge3 = %q, %v; want %q, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestShortDiffIsCapped(t *testing.T) {
	a := "one\ntwo\nthree\nfour\n"
	b := "one\nTWO\nthree\nfour\nfive\n"
	if got := shortDiff(a, b); got != "@@ -2 +2 @@\n-two\n+TWO\n@@ -4,0 +5 @@\n+five" {
		t.Fatalf("diff %q", got)
	}
	long := strings.Repeat("x\n", 200)
	got := shortDiff("", long)
	if n := strings.Count(got, "\n+x"); n >= 200 || !strings.Contains(got, "more changed lines not shown") {
		t.Fatalf("uncapped diff: %d lines shown\n%s", n, got)
	}
}

func TestRestoreModifiedFileAndConversation(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")}, reply{events: textReply("next")})
	h.set.Mode = ModeAuto
	sid := h.newSession()
	h.prompt("make it loud")
	list, _ := h.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: sid})
	if len(list.Checkpoints) != 1 {
		t.Fatalf("checkpoints %+v", list)
	}
	id := list.Checkpoints[0].CheckpointID
	res, err := h.m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: sid, CheckpointID: id, Restore: protocol.RestoreBoth})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || !res.Files[0].Restored || res.Files[0].Path != h.path("a.txt") {
		t.Fatalf("restore %+v", res)
	}
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("a.txt = %q", got)
	}
	s, _ := h.m.get(sid)
	if n := len(s.historySnapshot()); n != 0 {
		t.Fatalf("history has %d messages after a conversation restore of the first turn", n)
	}
	h.prompt("again")
	reqs := h.prov.requests()
	last := reqs[len(reqs)-1]
	if got := texts(last.Messages); !strings.HasPrefix(got, "again|The user restored files") || !strings.Contains(got, h.path("a.txt")) {
		t.Fatalf("the model saw %q", got)
	}
	_, err = h.m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: sid, CheckpointID: "nope", Restore: protocol.RestoreFiles})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Field != "checkpointId" {
		t.Fatalf("unknown checkpoint: %v", err)
	}
	_ = providers.RoleUser
}

func TestUndoRestoresTheNewestTurnsFilesWithoutTheModel(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("one")}, editReply("e2", "ALPHA", "LOUD"), reply{events: textReply("two")})
	h.set.Mode = ModeAuto
	h.newSession()
	h.prompt("first")
	h.prompt("second")
	if got := h.ws.file(h.path("a.txt")); got != "LOUD\n" {
		t.Fatalf("a.txt = %q", got)
	}
	before := len(h.prov.requests())
	if res := h.prompt("/undo"); res.StopReason != protocol.StopEndTurn {
		t.Fatalf("stop %q", res.StopReason)
	}
	if got := h.ws.file(h.path("a.txt")); got != "ALPHA\n" {
		t.Fatalf("after /undo a.txt = %q", got)
	}
	h.prompt("/undo")
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("after a second /undo a.txt = %q", got)
	}
	if n := len(h.prov.requests()); n != before {
		t.Fatalf("/undo called the model: %d requests, was %d", n, before)
	}
	msgs := kinds(h.client.snapshot(), protocol.UpdateAgentMessageChunk)
	last := msgs[len(msgs)-1].Content.Text
	if !strings.Contains(last, `"first"`) || !strings.Contains(last, h.path("a.txt")) {
		t.Fatalf("/undo answered %q", last)
	}
	h.prompt("/undo")
	msgs = kinds(h.client.snapshot(), protocol.UpdateAgentMessageChunk)
	if last := msgs[len(msgs)-1].Content.Text; !strings.HasPrefix(last, "Nothing to undo") {
		t.Fatalf("a third /undo answered %q", last)
	}
}

func TestCommonEnds(t *testing.T) {
	long := strings.Repeat("abcdefgh", 100)
	for _, c := range []struct {
		a, b         string
		prefix, suff int
	}{
		{"", "", 0, 0},
		{"abc", "abc", 3, 0},
		{"abc", "abXc", 2, 1},
		{long + "x" + long, long + "yy" + long, 800, 800},
		{long, long + long, 800, 0},
		{"aaaa", "aa", 2, 0},
	} {
		p, s := commonEnds(c.a, c.b)
		if p != c.prefix || s != c.suff {
			t.Errorf("commonEnds(%.10q, %.10q) = %d, %d; want %d, %d", c.a, c.b, p, s, c.prefix, c.suff)
		}
		if mid := c.b[p : len(c.b)-s]; c.a[:p]+mid+c.a[len(c.a)-s:] != c.b {
			t.Errorf("%.10q does not rebuild", c.b)
		}
	}
}

// A session resumed with another cwd has checkpoints of files outside its roots now: a restore
// must not write there (the workspace port trusts that every path it gets was contained).
func TestRestoreLeavesFilesOutsideTheRootsAlone(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")})
	h.set.Mode = ModeAuto
	sid := h.newSession()
	h.prompt("make it loud")
	list, _ := h.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: sid})
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	other := t.TempDir()
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: other}); err != nil {
		t.Fatal(err)
	}
	edits := h.ws.edits
	res, err := h.m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: sid, CheckpointID: list.Checkpoints[0].CheckpointID, Restore: protocol.RestoreFiles})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 1 || res.Files[0].Restored || !strings.Contains(res.Files[0].Reason, "outside") {
		t.Fatalf("restore %+v", res)
	}
	if h.ws.edits != edits || h.ws.file(h.path("a.txt")) != "ALPHA\n" {
		t.Fatalf("a file outside the roots was written: %d edits, a.txt %q", h.ws.edits-edits, h.ws.file(h.path("a.txt")))
	}
}

// Nor is the model told of a user's change to a file outside the roots it now has.
func TestUserChangesOutsideTheRootsAreNotShown(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")}, reply{events: textReply("next")})
	h.set.Mode = ModeAuto
	sid := h.newSession()
	h.prompt("make it loud")
	_ = h.m.Shutdown(context.Background())
	h.m = h.manager()
	other, _ := filepath.EvalSymlinks(t.TempDir())
	if _, err := h.m.Resume(context.Background(), protocol.SessionLoadParams{SessionID: sid, Cwd: other}); err != nil {
		t.Fatal(err)
	}
	h.ws.mu.Lock()
	h.ws.files[h.path("a.txt")] = "ALPHA\nsecret the user typed\n"
	h.ws.mu.Unlock()
	h.prompt("next")
	reqs := h.prov.requests()
	if got := texts(reqs[len(reqs)-1].Messages); strings.Contains(got, "secret") || strings.Contains(got, "The user changed") {
		t.Fatalf("the model saw %q", got)
	}
}

// A restore sent in the moment between a turn's answer and the session going idle waits for
// that moment to pass instead of being refused; one sent while the turn still runs is refused.
func TestRestoreRightAfterTheAnswerWaitsForTheSlot(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")})
	h.set.Mode = ModeAuto
	sid := h.newSession()
	h.prompt("make it loud")
	list, _ := h.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: sid})
	p := protocol.CheckpointRestoreParams{SessionID: sid, CheckpointID: list.Checkpoints[0].CheckpointID, Restore: protocol.RestoreFiles}
	s, _ := h.m.get(sid)

	s.mu.Lock()
	s.running = true // a turn runs
	s.mu.Unlock()
	if _, err := h.m.RestoreCheckpoint(context.Background(), p); !errors.Is(err, ErrBusy) {
		t.Fatalf("restore during a turn: %v", err)
	}

	s.mu.Lock()
	s.ending = true // its answer is on the wire; startNext has not run yet
	s.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		_, err := h.m.RestoreCheckpoint(context.Background(), p)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for { // wait until the restore is queued behind the ending turn
		s.mu.Lock()
		n := len(s.queue)
		s.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the restore was not queued")
		}
		time.Sleep(time.Millisecond)
	}
	s.startNext()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := h.ws.file(h.path("a.txt")); got != "alpha\n" {
		t.Fatalf("a.txt = %q", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		t.Fatal("the session stayed busy after the restore")
	}
}

// A steering message mid-turn does not report the turn's own edit of a file an earlier turn
// edited as the user's.
func TestSteerDoesNotReportTheTurnsOwnEditAsTheUsers(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("one")},
		editReply("e2", "ALPHA", "LOUD"), reply{events: textReply("two")})
	h.client.answer = answerWith(protocol.OptionAllowOnce)
	h.newSession()
	h.prompt("first")
	h.client.answer = nil // the second edit's permission waits for the test
	ch := h.promptAsync(context.Background(), "second")
	h.client.waitPermission(t, 2)
	if res, err := h.m.Steer(context.Background(), steerParams(h.sid, "and be quick")); err != nil || !res.Accepted {
		t.Fatalf("steer = %+v, %v", res, err)
	}
	s, _ := h.m.get(h.sid)
	s.remember(grant{Tool: "edit_file", Allow: true, Scope: "session"})
	<-ch
	if h.ws.file(h.path("a.txt")) != "LOUD\n" {
		t.Fatalf("a.txt = %q", h.ws.file(h.path("a.txt")))
	}
	reqs := h.prov.requests()
	if got := texts(reqs[len(reqs)-1].Messages); !strings.Contains(got, "and be quick") || strings.Contains(got, "The user changed") {
		t.Fatalf("the model saw %q", got)
	}
}
