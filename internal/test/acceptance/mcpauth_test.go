package acceptance_test

// PROTOCOL.md "MCP, 2026" OAuth, through the real binary: a protected MCP server and its fake
// authorization server (mcp/mcpauth/oauthtest) on 127.0.0.1; the fake editor's "browser" opens
// the URL agentd's window/showDocument names and follows the redirect to agentd's listener.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
	"github.com/agentd-dev/agentd/protocol"
)

func TestMCPSignInThroughTheEditor(t *testing.T) {
	t.Parallel()
	s := oauthtest.New()
	defer s.Close()
	s.ExpiresIn = 30 // under agentd's 60 s margin: every request refreshes first
	var mu sync.Mutex
	var shown []string
	opts := fakeeditor.Full()
	opts.ShowDocument = func(uri string, external bool) bool {
		mu.Lock()
		shown = append(shown, uri)
		mu.Unlock()
		if !external {
			return false
		}
		return oauthtest.Browser(context.Background(), uri) == nil
	}
	e := start(t, opts, replay(t, responses(callTool("whoami"), callTool("whoami"), map[string]any{"text": "done"})))
	sid := e.newSessionMCP(map[string]any{"type": "http", "name": "docs", "url": s.URL(), "headers": []any{}})

	// The start finds no token: a notice the client turns into a "Sign in" action.
	n := e.ed.WaitUpdate("the sign-in notice", func(n protocol.SessionNotification) bool {
		return n.SessionID == sid && n.Update.SessionUpdate == protocol.UpdateNotice && n.Update.Meta[protocol.MetaMCPSignIn] != nil
	})
	if m, _ := n.Update.Meta[protocol.MetaMCPSignIn].(map[string]any); m["server"] != "docs" || !strings.Contains(n.Update.NoticeTitle, "docs needs you to sign in") {
		t.Errorf("notice %+v", n.Update)
	}
	mu.Lock()
	if len(shown) != 0 {
		t.Error("the browser was opened before the user asked to sign in")
	}
	mu.Unlock()

	if code, msg := e.callError(protocol.MethodMCPSignIn, map[string]any{"sessionId": sid, "server": "nope"}); code == 0 || !strings.Contains(msg, `no MCP server "nope"`) {
		t.Errorf("sign-in of an unknown server: %d %q", code, msg)
	}
	var res protocol.MCPSignInResult
	if err := e.ed.Call(ctxT(t), protocol.MethodMCPSignIn, protocol.MCPSignInParams{SessionID: sid, Server: "docs"}, &res); err != nil {
		t.Fatalf("agent/mcp/signIn: %v", err)
	}
	mu.Lock()
	if len(shown) != 1 || !strings.HasPrefix(shown[0], s.AS.URL+"/authorize?") || !strings.Contains(shown[0], "code_challenge_method=S256") {
		t.Errorf("showDocument got %v", shown)
	}
	mu.Unlock()
	for _, r := range e.ed.Requests() {
		if r.Method == protocol.MethodShowDocument && !strings.Contains(string(r.Params), `"external":true`) {
			t.Errorf("showDocument params %s", r.Params)
		}
	}

	e.ed.AnswerPermissions("allow_once", "allow_once")
	if r := e.prompt(sid, "who am I"); r.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", r.StopReason)
	}
	var texts []string
	for _, u := range e.rawUpdates(sid) {
		if id, _ := u["toolCallId"].(string); strings.HasPrefix(id, "m_whoami") && u["status"] == "completed" {
			for _, c := range u["content"].([]any) {
				if s, ok := obj(c, "content", "text").(string); ok {
					texts = append(texts, s)
				}
			}
		}
	}
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "token access-") || !strings.HasPrefix(texts[1], "token access-") {
		t.Fatalf("whoami results %q", texts)
	}
	if texts[0] == texts[1] {
		t.Errorf("the second call sent the same token %q; want the refreshed one", texts[0])
	}
	if _, refreshes := s.Counts(); refreshes < 1 {
		t.Error("no refresh happened")
	}

	// The token lives in the 0600 file of the config dir, and nowhere in the project.
	file := filepath.Join(filepath.Dir(e.p.state), "config", "agentd", "mcp-oauth.json")
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v", file, fi, err)
	}
	filepath.WalkDir(e.root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), "access-") || strings.Contains(string(b), "refresh-") {
				t.Errorf("a token was written to the project file %s", p)
			}
		}
		return nil
	})
	for _, tok := range s.SeenTokens() {
		if strings.Contains(e.p.stderr.String(), tok) {
			t.Errorf("the log holds token %s", tok)
		}
	}
}

// On the ACP door there is no "Sign in" action: the sign-in starts by itself and its link comes
// as an agent_message_chunk; opening it signs the server in, said by a notice.
func TestACPMCPSignInByLink(t *testing.T) {
	t.Parallel()
	s := oauthtest.New()
	defer s.Close()
	home := realDir(t)
	p := startACP(t, home)
	p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	p.call("session/new", map[string]any{"cwd": home, "mcpServers": []any{map[string]any{"type": "http", "name": "docs", "url": s.URL(), "headers": []any{}}}})
	linkRE := regexp.MustCompile(`http://127\.0\.0\.1:\d+/authorize\?\S+`)
	var link string
	deadline := time.Now().Add(15 * time.Second)
	for link == "" && time.Now().Before(deadline) {
		p.drain(200 * time.Millisecond)
		for _, m := range p.seen {
			if u := obj(m, "params", "update"); u != nil && obj(u, "sessionUpdate") == "agent_message_chunk" {
				if text, _ := obj(u, "content", "text").(string); strings.Contains(text, "MCP server docs needs you to sign in") {
					link = linkRE.FindString(text)
				}
			}
		}
	}
	if link == "" {
		t.Fatalf("no sign-in link in the session; frames: %v", p.seen)
	}
	if err := oauthtest.Browser(context.Background(), link); err != nil {
		t.Fatal(err)
	}
	signed := false
	for deadline := time.Now().Add(15 * time.Second); !signed && time.Now().Before(deadline); {
		p.drain(200 * time.Millisecond)
		for _, m := range p.seen {
			if text := fmt.Sprint(obj(m, "params", "update", "content", "text")); strings.Contains(text, "Signed in to MCP server docs") {
				signed = true
			}
		}
	}
	if !signed {
		t.Errorf("no word of the sign-in; frames: %v", p.seen)
	}
	if _, err := os.Stat(filepath.Join(home, "config", "agentd", "mcp-oauth.json")); err != nil {
		t.Errorf("no token stored: %v", err)
	}
}
