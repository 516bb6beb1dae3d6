package acceptance_test

// PROTOCOL.md "Principles" and "Lifecycle and negotiation", "Exit".

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
)

func initParams(extra map[string]any) map[string]any {
	p := map[string]any{"processId": nil, "capabilities": map[string]any{}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// InitializeResult: serverInfo {name:"agentd", version} and capabilities.experimental.agent.
func TestInitializeResultShape(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	r := mustJSON(t, e.init)
	if obj(r, "serverInfo", "name") != "agentd" {
		t.Errorf("serverInfo.name = %v, want agentd", obj(r, "serverInfo", "name"))
	}
	if v, _ := obj(r, "serverInfo", "version").(string); v == "" {
		t.Errorf("serverInfo.version is empty")
	}
	caps, _ := obj(r, "capabilities").(map[string]any)
	if _, ok := caps["textDocumentSync"]; ok {
		t.Errorf("capabilities advertise textDocumentSync: %v", caps["textDocumentSync"])
	}
	agent, _ := obj(caps, "experimental", "agent").(map[string]any)
	if agent == nil {
		t.Fatalf("no capabilities.experimental.agent in %s", e.init)
	}
	if agent["protocolVersion"] != float64(1) {
		t.Errorf("protocolVersion = %v, want 1", agent["protocolVersion"])
	}
	ac, _ := agent["agentCapabilities"].(map[string]any)
	if ac["loadSession"] != true {
		t.Errorf("agentCapabilities.loadSession = %v, want true", ac["loadSession"])
	}
	for _, k := range []string{"list", "resume", "close", "delete"} {
		if _, ok := obj(ac, "sessionCapabilities", k).(map[string]any); !ok {
			t.Errorf("agentCapabilities.sessionCapabilities.%s = %v, want {}", k, obj(ac, "sessionCapabilities", k))
		}
	}
	pc, _ := ac["promptCapabilities"].(map[string]any)
	if _, ok := pc["image"].(bool); !ok {
		t.Errorf("promptCapabilities.image = %v, want a bool", pc["image"])
	}
	if pc["audio"] != false || pc["embeddedContext"] != true {
		t.Errorf("promptCapabilities = %v, want audio false, embeddedContext true", pc)
	}
	for _, k := range []string{"http", "sse"} {
		if _, ok := obj(ac, "mcpCapabilities", k).(bool); !ok {
			t.Errorf("mcpCapabilities.%s = %v, want a bool", k, obj(ac, "mcpCapabilities", k))
		}
	}
	provs, ok := agent["providers"].([]any)
	if !ok || len(provs) == 0 {
		t.Fatalf("providers = %v, want a non-empty list (the settings name one)", agent["providers"])
	}
	found := false
	for _, p := range provs {
		for _, k := range []string{"providerId", "apiType", "baseUrl", "keyStatus"} {
			if _, ok := obj(p, k).(string); !ok {
				t.Errorf("provider %v lacks %s", p, k)
			}
		}
		if ks := obj(p, "keyStatus"); !slices.Contains([]any{"set", "missing", "not_needed"}, ks) {
			t.Errorf("provider %v: keyStatus %v not set|missing|not_needed", obj(p, "providerId"), ks)
		}
		if obj(p, "providerId") == "r" {
			found = true
			if obj(p, "apiType") != "replay" {
				t.Errorf("provider r apiType = %v", obj(p, "apiType"))
			}
		}
	}
	if !found {
		t.Errorf("the provider of the settings (r) is not listed: %v", provs)
	}
}

// Positions use the negotiated encoding: UTF-16 unless the client offers utf-8/utf-32.
func TestPositionEncodingNegotiation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		offered []string
		want    string
	}{
		{"default", nil, "utf-16"},
		{"utf-16 only", []string{"utf-16"}, "utf-16"},
		{"utf-8 offered", []string{"utf-16", "utf-8"}, "utf-8"},
		{"utf-32 offered", []string{"utf-32", "utf-16"}, "utf-32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startProc(t, "")
			frames := p.frames()
			params := initParams(nil)
			if tc.offered != nil {
				params["capabilities"] = map[string]any{"general": map[string]any{"positionEncodings": tc.offered}}
			}
			p.send(request(1, "initialize", params))
			r := response(t, frames, 1)
			if got := obj(r, "result", "capabilities", "positionEncoding"); got != tc.want {
				t.Errorf("positionEncoding = %v, want %s (%v)", got, tc.want, r)
			}
		})
	}
}

// The client sends its latest protocol version; agentd answers with it or with its own latest.
func TestProtocolVersionAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		client any
	}{{"same", 1}, {"newer client", 7}, {"absent", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := startProc(t, "")
			frames := p.frames()
			agent := map[string]any{"clientCapabilities": map[string]any{}}
			if tc.client != nil {
				agent["protocolVersion"] = tc.client
			}
			p.send(request(1, "initialize", initParams(map[string]any{"initializationOptions": map[string]any{"agent": agent}})))
			r := response(t, frames, 1)
			if got := obj(r, "result", "capabilities", "experimental", "agent", "protocolVersion"); got != float64(1) {
				t.Errorf("protocolVersion answered %v for a client at %v, want 1 (agentd's latest)", got, tc.client)
			}
		})
	}
}

// A request before initialize is LSP's ServerNotInitialized (-32002).
func TestRequestBeforeInitialize(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	p.send(request(1, "agent/session/new", map[string]any{"cwd": t.TempDir()}))
	r := response(t, frames, 1)
	if code := obj(r, "error", "code"); code != float64(-32002) {
		t.Fatalf("request before initialize answered %v, want error -32002", r)
	}
	// The server is still usable afterwards.
	p.send(request(2, "initialize", initParams(nil)))
	if r := response(t, frames, 2); r["error"] != nil {
		t.Fatalf("initialize after the refused request: %v", r)
	}
}

func TestUnknownMethod(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	if code, msg := e.callError("agent/session/frobnicate", map[string]any{}); code != -32601 {
		t.Errorf("unknown method: code %d (%s), want -32601", code, msg)
	}
}

// After shutdown + exit, agentd exits 0 within 1 s, stdin still open.
func TestShutdownThenExit(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	p.send(request(1, "initialize", initParams(nil)))
	response(t, frames, 1)
	p.send(notification("initialized", map[string]any{}))
	p.send(request(2, "shutdown", nil))
	if r := response(t, frames, 2); r["error"] != nil {
		t.Fatalf("shutdown: %v", r)
	}
	p.send(notification("exit", nil))
	code, _ := p.waitExit(exitGuard)
	if code != 0 {
		t.Errorf("after shutdown+exit: exit code %d, want 0", code)
	}
}

// exit without shutdown: exit code 1.
func TestExitWithoutShutdown(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	p.send(request(1, "initialize", initParams(nil)))
	response(t, frames, 1)
	p.send(notification("exit", nil))
	code, _ := p.waitExit(exitGuard)
	if code != 1 {
		t.Errorf("exit without shutdown: exit code %d, want 1", code)
	}
}

// End of stdin = exit: code 1 within 1 s, even with a turn running.
func TestEndOfInputDuringTurn(t *testing.T) {
	t.Parallel()
	delay := 200
	e := start(t, fakeeditor.Full(), replay(t, map[string]any{"chunkDelayMs": delay, "responses": []any{
		map[string]any{"text": "a long answer that streams slowly, word by word, for many seconds on end, and then some more words"},
	}}))
	sid := e.newSession()
	go e.ed.Prompt(ctxT(t), sid, "talk")
	e.ed.WaitUpdateKind(sid, "agent_message_chunk")
	e.p.stdin.Close()
	code, _ := e.p.waitExit(exitGuard)
	if code != 1 {
		t.Errorf("end of stdin mid-turn: exit code %d, want 1", code)
	}
}

// LSP framing: a Content-Type header may follow Content-Length.
func TestFramingWithContentType(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{}}}`
	fmt.Fprintf(p.stdin, "Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n%s", len(body), body)
	if r := response(t, frames, 1); r["error"] != nil {
		t.Fatalf("initialize with a Content-Type header: %v", r)
	}
}

// shutdown before initialize is not served either.
func TestShutdownBeforeInitialize(t *testing.T) {
	t.Parallel()
	p := startProc(t, "")
	frames := p.frames()
	p.send(request(1, "shutdown", nil))
	if r := response(t, frames, 1); obj(r, "error", "code") != float64(-32002) {
		t.Errorf("shutdown before initialize: %v, want -32002", r)
	}
}
