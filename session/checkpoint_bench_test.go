package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// BenchmarkRecordCheckpoint10x100KB is what a turn that edits 10 files of 100 KB pays for its
// checkpoint: reading nothing more (an edit carries its pre-image), folding the edits into the
// list and saving the checkpoint aside, before the first edit and again whole at the turn's end.
// The editor's ApplyEdit itself is not counted (the fake applies in memory).
func BenchmarkRecordCheckpoint10x100KB(b *testing.B) {
	h := newHarness(&testing.T{})
	defer h.m.Shutdown(context.Background())
	sid := h.newSession()
	s, _ := h.m.get(sid)
	line := strings.Repeat("x", 99) + "\n"
	var paths []string
	for i := range 10 {
		p := filepath.Join(h.dir, fmt.Sprintf("f%d.txt", i))
		h.ws.files[p] = strings.Repeat(line, 1000)
		paths = append(paths, p)
	}
	ctx := context.Background()
	orig := strings.Repeat(line, 1000)
	changed := "changed\n" + orig[100:]
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		t := &turn{s: s, ctx: ctx, changes: newTurnChanges()}
		for _, p := range paths {
			h.ws.files[p] = orig
		}
		b.StartTimer()
		t.startCheckpoint(nil, 0)
		ws := t.workspace()
		for _, p := range paths {
			_ = ws.ApplyEdit(ctx, "edit", []workspace.Change{{Kind: workspace.ChangeEdit, Path: p, OldText: orig, NewText: changed}})
		}
		t.endCheckpoint()
	}
}

// tenFileCheckpoint records, in h's session, a turn that edited 10 files of 100 KB, and returns
// the files' texts before and after it.
func tenFileCheckpoint(h *harness, s *Session) (paths []string, before, after string, cp *checkpoint) {
	line := strings.Repeat("x", 99) + "\n"
	before = strings.Repeat(line, 1000)
	after = "changed\n" + before[100:]
	for i := range 10 {
		p := filepath.Join(h.dir, fmt.Sprintf("f%d.txt", i))
		h.ws.files[p] = before
		paths = append(paths, p)
	}
	ctx := context.Background()
	t := &turn{s: s, ctx: ctx, changes: newTurnChanges()}
	t.startCheckpoint(nil, 0)
	ws := t.workspace()
	for _, p := range paths {
		_ = ws.ApplyEdit(ctx, "edit", []workspace.Change{{Kind: workspace.ChangeEdit, Path: p, OldText: before, NewText: after}})
	}
	t.endCheckpoint()
	return paths, before, after, t.cp
}

func TestRestoreOf10FilesIsOneApplyEdit(t *testing.T) {
	h := newHarness(t)
	sid := h.newSession()
	s, _ := h.m.get(sid)
	paths, before, _, cp := tenFileCheckpoint(h, s)
	edits := h.ws.edits
	res, err := h.m.RestoreCheckpoint(context.Background(), protocol.CheckpointRestoreParams{SessionID: sid, CheckpointID: cp.ID, Restore: protocol.RestoreFiles})
	if err != nil {
		t.Fatal(err)
	}
	if n := h.ws.edits - edits; n != 1 {
		t.Fatalf("restoring 10 files took %d workspace edits, want 1", n)
	}
	if len(res.Files) != 10 {
		t.Fatalf("files %+v", res.Files)
	}
	for _, p := range paths {
		if h.ws.file(p) != before {
			t.Fatalf("%s not restored", p)
		}
	}
}

// BenchmarkRestore10x100KB is a restore of a turn that edited 10 files of 100 KB: reading the
// 10 files, comparing each with its post-image, and one workspace edit (the fake applies it in
// memory, so the editor's own work is not counted).
func BenchmarkRestore10x100KB(b *testing.B) {
	h := newHarness(&testing.T{})
	defer h.m.Shutdown(context.Background())
	sid := h.newSession()
	s, _ := h.m.get(sid)
	paths, _, after, cp := tenFileCheckpoint(h, s)
	ctx := context.Background()
	p := protocol.CheckpointRestoreParams{SessionID: sid, CheckpointID: cp.ID, Restore: protocol.RestoreFiles}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		for _, p := range paths {
			h.ws.files[p] = strings.Clone(after) // as read from the editor: not the post-image's bytes
		}
		b.StartTimer()
		if _, err := h.m.RestoreCheckpoint(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
