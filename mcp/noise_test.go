package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func observed(t *testing.T, cfgs ...Config) (*Set, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.InfoLevel)
	p := NewPool(zap.New(core))
	s := p.Open(cfgs, builtin(), nil)
	t.Cleanup(p.Close)
	return s, logs
}

// A server that floods its client with notifications/tools/list_changed costs one log line
// and one re-listing per turn, not one per notification (issue 26 item 10).
func TestListChangedFloodIsCoalesced(t *testing.T) {
	lists := filepath.Join(t.TempDir(), "lists")
	cfg := stdioConfig("flood", "-flood", "2000")
	cfg.Env = []NameValue{{Name: "TESTSERVER_LISTS", Value: lists}}
	set, logs := observed(t, cfg)
	reg := set.Snapshot(context.Background())
	if _, ok := reg.Lookup("flooded"); !ok {
		t.Fatal("no tool")
	}
	// The flood arrives after the handshake; give it time to be read whole.
	time.Sleep(300 * time.Millisecond)
	set.Snapshot(context.Background())
	set.Snapshot(context.Background())
	if n := logs.FilterMessageSnippet("list changed").Len(); n > 3 {
		t.Errorf("the flood was logged %d times", n)
	}
	b, _ := os.ReadFile(lists)
	if n := strings.Count(string(b), "list"); n > 3 {
		t.Errorf("the flood made %d listings for 3 snapshots", n)
	}
}

// A server's stderr reaches the log capped per line and in all: a flood of lines stops with one
// line saying so, and a line too long for the reader is cut, not the end of the logging.
func TestStderrIsCapped(t *testing.T) {
	set, logs := observed(t, stdioConfig("noisy", "-many", "0", "-stderr", "5000"))
	set.Snapshot(context.Background())
	waitFor(t, "the cap's line", func() bool { return logs.FilterMessageSnippet("stderr not logged").Len() > 0 })
	lines := logs.FilterMessage("MCP server stderr").All()
	total := 0
	for _, e := range lines {
		l := e.ContextMap()["line"].(string)
		if len(l) > maxStderrLine+len("…") {
			t.Errorf("a stderr line of %d bytes was logged", len(l))
		}
		total += len(l)
	}
	if len(lines) > maxStderrLines || total > maxStderrBytes {
		t.Errorf("%d stderr lines (%d bytes) were logged", len(lines), total)
	}
	if len(lines) < 10 {
		t.Errorf("only %d stderr lines were logged", len(lines))
	}
}
