package session

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
