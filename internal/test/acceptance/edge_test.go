package acceptance_test

// Edges of the contract: bad settings at initialize, requests after shutdown, exit with a
// program running, a file the editor does not have, /compact, list pagination.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

// A bad value in initializationOptions.agent.settings is invalid params naming the key.
func TestInitializeBadSettingsNamesKey(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	p.send(request(1, "initialize", initParams(map[string]any{"initializationOptions": map[string]any{"agent": map[string]any{
		"protocolVersion": 1, "clientCapabilities": map[string]any{}, "settings": map[string]any{"mode": "yolo"}}}})))
	r := response(t, frames, 1)
	msg, _ := obj(r, "error", "message").(string)
	if obj(r, "error", "code") != float64(-32602) || !strings.Contains(msg, "mode") {
		t.Errorf("initialize with settings.mode yolo: %v, want -32602 naming mode", r)
	}
}

// After shutdown, requests other than exit are InvalidRequest (LSP).
func TestRequestAfterShutdown(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	p.send(request(1, "initialize", initParams(nil)))
	response(t, frames, 1)
	p.send(request(2, "shutdown", nil))
	response(t, frames, 2)
	p.send(request(3, protocol.MethodProvidersList, map[string]any{}))
	if r := response(t, frames, 3); obj(r, "error", "code") != float64(-32600) {
		t.Errorf("a request after shutdown: %v, want error -32600", r)
	}
	p.send(notification("exit", nil))
	if code, _ := p.waitExit(exitGuard); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// exit without shutdown with a program running: the program's process group is killed and
// agentd exits 1 within 1 s.
func TestExitKillsRunningProgram(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "p", "name": "run_program",
			"args": map[string]any{"command": []string{"sh", "-c", "sleep 30 & echo $! > pid.txt; wait"}}}}},
		map[string]any{"text": "unreachable"},
	)))
	sid := e.newSession()
	e.setMode(sid, "auto")
	go e.ed.Prompt(ctxT(t), sid, "run")
	pidFile := filepath.Join(e.root, "pid.txt")
	eventually(t, "the program to start", func() bool {
		b, err := os.ReadFile(pidFile)
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	e.ed.Notify(ctxT(t), "exit", nil)
	if code, _ := e.p.waitExit(exitGuard); code != 1 {
		t.Errorf("exit without shutdown during a program: code %d, want 1", code)
	}
	b, _ := os.ReadFile(pidFile)
	pid := strings.TrimSpace(string(b))
	eventually(t, "the program's process group (its sleep) to be gone", func() bool {
		_, err := os.Stat("/proc/" + pid)
		return os.IsNotExist(err) || zombie(pid)
	})
}

// A file neither open nor on disk: the editor answers -32002, and the read fails saying so
// (agentd does not invent content).
func TestReadMissingFile(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "r", "name": "read_file", "args": map[string]any{"path": "missing.txt"}}}},
		map[string]any{"text": "it is missing"},
	)))
	sid := e.newSession()
	if res := e.prompt(sid, "read"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	f := finalUpdate(e, sid, "r")
	if f == nil || f["status"] != "failed" {
		t.Fatalf("read of a missing file: %v, want failed", f)
	}
	if out := strings.ToLower(callText(e, sid, "r")); !strings.Contains(out, "not found") && !strings.Contains(out, "no such file") && !strings.Contains(out, "does not exist") {
		t.Errorf("the failed read does not say the file is missing: %q", out)
	}
}

// /compact runs a compaction: compaction_update in_progress → completed with the summary.
func TestCompactCommand(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, map[string]any{"title": "t", "summary": "We talked about widgets.", "responses": []any{
		map[string]any{"text": "first answer"},
	}}))
	sid := e.newSession()
	e.prompt(sid, "talk about widgets")
	if res := e.prompt(sid, "/compact"); res.StopReason != "end_turn" {
		t.Errorf("/compact stopReason %q", res.StopReason)
	}
	cu := kinds(e.rawUpdates(sid), "compaction_update")
	if len(cu) < 2 {
		t.Fatalf("compaction updates %v, want in_progress then completed", cu)
	}
	id := cu[0]["compactionId"]
	if id == nil || id == "" || cu[len(cu)-1]["compactionId"] != id {
		t.Errorf("compactionId %v / %v", id, cu[len(cu)-1]["compactionId"])
	}
	if last := cu[len(cu)-1]; last["status"] != "completed" || last["summary"] != "We talked about widgets." {
		t.Errorf("last compaction_update %v", last)
	}
}

// list pages with nextCursor and the next page continues where the first ended.
func TestSessionListPages(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	made := map[string]bool{}
	for range 105 {
		made[e.newSession()] = true
	}
	seen := map[string]bool{}
	cursor := ""
	pages := 0
	for {
		var l protocol.SessionListResult
		if err := e.ed.Call(ctxT(t), protocol.MethodSessionList, protocol.SessionListParams{Cursor: cursor}, &l); err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range l.Sessions {
			if seen[s.SessionID] {
				t.Errorf("session %s on two pages", s.SessionID)
			}
			seen[s.SessionID] = true
		}
		if l.NextCursor == "" || pages > 10 {
			break
		}
		cursor = l.NextCursor
	}
	if pages < 2 {
		t.Errorf("105 sessions in %d page(s): no pagination", pages)
	}
	for id := range made {
		if !seen[id] {
			t.Errorf("session %s missing from the listing", id)
		}
	}
}

// mcpServers agentd does not run are not dropped silently: a warning notice names them (the
// contract's notice for MCP servers down), after session/new's answer.
func TestMCPServersNotice(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	var res protocol.SessionNewResult
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionNew, map[string]any{"cwd": e.root, "mcpServers": []any{
		map[string]any{"name": "docs-server", "command": "/nonexistent/mcp", "args": []string{}, "env": []any{}}}}, &res); err != nil {
		t.Fatalf("session/new with mcpServers: %v", err)
	}
	n := e.ed.WaitUpdate("a notice naming the MCP server", func(n protocol.SessionNotification) bool {
		return n.SessionID == res.SessionID && n.Update.SessionUpdate == "notice" &&
			strings.Contains(n.Update.NoticeTitle+n.Update.Description, "docs-server")
	})
	if n.Update.Severity != "warning" && n.Update.Severity != "error" {
		t.Errorf("notice severity %q", n.Update.Severity)
	}
}

// A JSON value that is not a valid request is answered -32600 (JSON-RPC 2.0), and the server
// reads on.
func TestInvalidRequestAnswered(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	p.send(request(1, "initialize", initParams(nil)))
	response(t, frames, 1)
	p.send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": 42})
	if r := response(t, frames, 2); obj(r, "error", "code") != float64(-32600) {
		t.Errorf("a request whose method is a number: %v, want -32600", r)
	}
	p.send(request(3, protocol.MethodProvidersList, map[string]any{}))
	if r := response(t, frames, 3); r["error"] != nil {
		t.Errorf("the next request: %v", r)
	}
}

// promptCapabilities.image is true: an image block is taken.
func TestPromptWithImage(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(map[string]any{"text": "a red dot"})))
	sid := e.newSession()
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	var res protocol.PromptResult
	if err := e.ed.Call(ctxT(t), protocol.MethodSessionPrompt, protocol.PromptParams{SessionID: sid, Prompt: []protocol.ContentBlock{
		protocol.TextBlock("what is this?"), {Type: "image", MimeType: "image/png", Data: png}}}, &res); err != nil {
		t.Fatalf("prompt with an image: %v", err)
	}
	if res.StopReason != "end_turn" {
		t.Errorf("stopReason %q", res.StopReason)
	}
}
