package mcp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// Issue 26 item 10: a server that floods its stderr, or sends list_changed in a loop, fills
// agentd's log only up to a cap: a bounded number of lines, then one line saying the rest is
// not logged; the stderr is still drained so the server never blocks on it.
func TestServerStderrAndListChangedLogIsCapped(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	sv := &server{log: zap.New(core)}
	w, err := sv.stderrLog()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20000 {
			fmt.Fprintf(w, "noise line %d %s\n", i, strings.Repeat("x", 200))
		}
		w.Close()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the server blocked writing its stderr")
	}
	for range 10000 {
		sv.markDirty()
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && logs.FilterMessageSnippet("not logged").Len() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	stderrLines := logs.FilterMessage("MCP server stderr").Len()
	if stderrLines == 0 || stderrLines > maxStderrLines {
		t.Errorf("%d stderr lines logged, want 1..%d", stderrLines, maxStderrLines)
	}
	if n := logs.FilterMessageSnippet("not logged").Len(); n != 1 {
		t.Errorf("%d notes that the rest of stderr is not logged, want 1", n)
	}
	if n := logs.FilterMessageSnippet("list changed").Len(); n != 1 {
		t.Errorf("%d list_changed lines for one flood between turns, want 1", n)
	}
}
