package acceptance_test

// PROTOCOL.md "MCP tool sources", through the real binary: real MCP servers on the official Go
// SDK, served over Streamable HTTP from this process on 127.0.0.1, one scenario per rule.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
)

// mcpServer serves srv and returns its session/new entry.
func mcpServer(t *testing.T, name string, srv *sdk.Server) map[string]any {
	t.Helper()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	// The daemon holds a stream open; close the client side before waiting for the server.
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return map[string]any{"type": "http", "name": name, "url": ts.URL, "headers": []any{}}
}

func mcpTools(name string, tools ...string) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, nil)
	for _, tn := range tools {
		addMCPTool(srv, name, tn)
	}
	return srv
}

func addMCPTool(srv *sdk.Server, server, tool string) {
	srv.AddTool(&sdk.Tool{Name: tool, Description: server + " " + tool, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if tool == "fails" {
				return nil, errors.New("the backend is down")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: server + " ran " + tool}}}, nil
		})
}

func (e *env) newSessionMCP(servers ...map[string]any) string {
	e.t.Helper()
	var res protocol.SessionNewResult
	if err := e.ed.Call(ctxT(e.t), protocol.MethodSessionNew, map[string]any{"cwd": e.root, "mcpServers": servers}, &res); err != nil {
		e.t.Fatalf("session/new: %v", err)
	}
	return res.SessionID
}

func callTool(name string) map[string]any {
	return map[string]any{"toolCalls": []any{map[string]any{"id": "m_" + name, "name": name, "args": map[string]any{}}}}
}

// finalCall returns the last status and text content of the last tool call whose id starts
// with id (agentd makes the model's ids unique per session).
func (e *env) finalCall(sid, id string) (status, text string) {
	last := ""
	for _, u := range e.rawUpdates(sid) {
		got, _ := u["toolCallId"].(string)
		if got != id && !strings.HasPrefix(got, id+"_") {
			continue
		}
		if got != last {
			last, status, text = got, "", ""
		}
		if s, ok := u["status"].(string); ok {
			status = s
		}
		if cs, ok := u["content"].([]any); ok {
			for _, c := range cs {
				if s, ok := obj(c, "content", "text").(string); ok {
					text = s
				}
			}
		}
	}
	return status, text
}

func (e *env) notices(sid string) string {
	var b strings.Builder
	for _, u := range kinds(e.rawUpdates(sid), "notice") {
		fmt.Fprintf(&b, "%v: %v\n", u["title"], u["description"])
	}
	return b.String()
}

// Rule 1 and approval: a reserved name is dropped (and said so), a collision is qualified, and
// the call asks in auto mode with the server in its title and three options.
func TestMCPNamesAndApproval(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(callTool("alpha_search"), map[string]any{"text": "done"})))
	a := mcpServer(t, "alpha", mcpTools("alpha", "search", "read_file"))
	b := mcpServer(t, "beta", mcpTools("beta", "search"))
	sid := e.newSessionMCP(a, b)
	e.setMode(sid, "auto")
	e.ed.AnswerPermissions("allow_once")
	if res := e.prompt(sid, "search"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	ps := e.rawPermissions()
	if len(ps) != 1 {
		t.Fatalf("%d permission requests in auto mode, want 1", len(ps))
	}
	if title := obj(ps[0], "toolCall", "title"); title != "alpha: search" {
		t.Errorf("title %v", title)
	}
	var opts []string
	for _, o := range ps[0]["options"].([]any) {
		opts = append(opts, obj(o, "optionId").(string))
	}
	if strings.Join(opts, ",") != "allow_once,reject_once,reject_always" {
		t.Errorf("options %v", opts)
	}
	if st, text := e.finalCall(sid, "m_alpha_search"); st != "completed" || text != "alpha ran search" {
		t.Errorf("call %s %q", st, text)
	}
	if n := e.notices(sid); !strings.Contains(n, "alpha: read_file (its name is reserved") {
		t.Errorf("no notice of the reserved name; notices:\n%s", n)
	}
}

// Rule 2: a tool a server adds mid-session appears at the next turn, not in the running one.
func TestMCPListChangedNextTurn(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(
		callTool("later"), map[string]any{"text": "no such tool"},
		callTool("later"), map[string]any{"text": "ran it"},
	)))
	srv := mcpTools("live", "first")
	sid := e.newSessionMCP(mcpServer(t, "live", srv))
	e.prompt(sid, "one")
	if st, text := e.finalCall(sid, "m_later"); st != "failed" || !strings.Contains(text, "no tool named") {
		t.Fatalf("turn 1: %s %q, want an unknown tool", st, text)
	}
	addMCPTool(srv, "live", "later")
	e.ed.AnswerPermissions("allow_once")
	// The server's list_changed arrives on its own stream; the turn after it sees the tool.
	waitUntil(t, "agentd to hear list_changed", func() bool { return strings.Contains(e.p.stderr.String(), "list changed") })
	e.prompt(sid, "two")
	if st, text := e.finalCall(sid, "m_later"); st != "completed" || text != "live ran later" {
		t.Errorf("turn 2: %s %q, want the new tool to run", st, text)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Rule 3: at most 12 contributed tools reach the model; the drops are one notice.
func TestMCPBudget(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(callTool("t12"), map[string]any{"text": "done"})))
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("t%02d", i))
	}
	sid := e.newSessionMCP(mcpServer(t, "many", mcpTools("many", names...)))
	e.prompt(sid, "go")
	if st, text := e.finalCall(sid, "m_t12"); st != "failed" || !strings.Contains(text, "no tool named") {
		t.Errorf("t12 (the 13th) = %s %q, want it not offered", st, text)
	}
	n := e.notices(sid)
	if !strings.Contains(n, "8 MCP tools not offered") || !strings.Contains(n, "over the budget of 12") {
		t.Errorf("notices:\n%s", n)
	}
}

// Rule 4: a server that cannot start is a notice; a call that fails is a failed call, and the
// turn goes on to its end.
func TestMCPFailureCostsOneCall(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses(callTool("fails"), callTool("works"), map[string]any{"text": "done"})))
	missing := map[string]any{"name": "ghost", "command": "/nonexistent/agentd-mcp-server", "args": []any{}, "env": []any{}}
	sid := e.newSessionMCP(missing, mcpServer(t, "flaky", mcpTools("flaky", "fails", "works")))
	e.ed.AnswerPermissions("allow_once", "allow_once")
	if res := e.prompt(sid, "go"); res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	if st, text := e.finalCall(sid, "m_fails"); st != "failed" || !strings.Contains(text, "flaky") {
		t.Errorf("fails = %s %q, want a failed call naming the server", st, text)
	}
	if st, _ := e.finalCall(sid, "m_works"); st != "completed" {
		t.Errorf("works = %s after the failure", st)
	}
	if n := e.notices(sid); !strings.Contains(n, "MCP server ghost is not available") {
		t.Errorf("notices:\n%s", n)
	}
}

// A malformed entry is -32602 naming its field.
func TestMCPMalformedEntry(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	code, msg := e.callError(protocol.MethodSessionNew, map[string]any{"cwd": e.root, "mcpServers": []any{
		map[string]any{"type": "http", "name": "x", "url": "ftp://nope"}}})
	if code != -32602 || !strings.Contains(msg, "mcpServers[0].url") {
		t.Errorf("%d %q", code, msg)
	}
}
