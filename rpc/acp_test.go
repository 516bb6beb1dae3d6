package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers/keys"
	"github.com/agentd-dev/agentd/session"
)

func TestACPTranslateNames(t *testing.T) {
	cases := []struct {
		incoming bool
		in, want string
	}{
		{true, `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/x"}}`, "agent/session/new"},
		{true, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`, "agent/session/cancel"},
		{true, `{"jsonrpc":"2.0","id":2,"method":"_agentd/session/steer","params":{}}`, "agent/x/session/steer"},
		{true, `{"jsonrpc":"2.0","id":3,"method":"_agentd/providers/list"}`, "agent/providers/list"},
		{true, `{"jsonrpc":"2.0","id":6,"method":"_agentd/checkpoints/restore","params":{}}`, protocol.MethodCheckpointsRestore},
		{true, `{"jsonrpc":"2.0","id":4,"method":"initialize","params":{}}`, "initialize"},
		{true, `{"jsonrpc":"2.0","id":5,"method":"authenticate","params":{}}`, "authenticate"},
		{false, `{"jsonrpc":"2.0","id":1,"method":"agent/session/request_permission","params":{}}`, "session/request_permission"},
		{false, `{"jsonrpc":"2.0","id":2,"method":"agent/fs/read_text_file","params":{}}`, "fs/read_text_file"},
		{false, `{"jsonrpc":"2.0","id":3,"method":"agent/x/diagnostics","params":{}}`, "_agentd/diagnostics"},
		{false, `{"jsonrpc":"2.0","method":"agent/session/update","params":{"sessionId":"s","update":{}}}`, "session/update"},
	}
	for _, c := range cases {
		out := acpTranslate(c.incoming, []byte(c.in))
		var env struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(out, &env); err != nil {
			t.Fatalf("%s: %v: %s", c.in, err, out)
		}
		if env.Method != c.want {
			t.Errorf("%s → method %q, want %q", c.in, env.Method, c.want)
		}
		var in struct {
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal([]byte(c.in), &in)
		if string(in.ID) != string(env.ID) || string(in.Params) != string(env.Params) {
			t.Errorf("%s: id or params changed: %s", c.in, out)
		}
	}
}

// ACP's own update kinds go as session/update; agentd's (notice, compaction_update), which an ACP
// client's schema would reject, as the extension notification _agentd/session/update, unchanged.
func TestACPTranslateAgentdUpdatesAsExtension(t *testing.T) {
	sid := strings.Repeat("s", 200)
	for _, c := range []struct {
		u    protocol.SessionUpdate
		want string
	}{
		{protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, Content: &protocol.ContentBlock{Type: "text", Text: `"sessionUpdate":"notice"`}}, "session/update"},
		{protocol.SessionUpdate{SessionUpdate: protocol.UpdateUsageUpdate}, "session/update"},
		{protocol.SessionUpdate{SessionUpdate: protocol.UpdateNotice, Severity: protocol.SeverityWarning, NoticeTitle: "MCP server not started"}, "_agentd/session/update"},
		{protocol.SessionUpdate{SessionUpdate: protocol.UpdateCompactionUpdate, Status: protocol.StatusCompleted}, "_agentd/session/update"},
	} {
		params := protocol.AppendSessionNotification(nil, &protocol.SessionNotification{SessionID: sid, Update: c.u})
		body := append([]byte(`{"jsonrpc":"2.0","method":"`+protocol.MethodSessionUpdate+`","params":`), params...)
		body = append(body, '}')
		var env struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(acpTranslate(false, body), &env); err != nil {
			t.Fatalf("%s: %v", c.u.SessionUpdate, err)
		}
		if env.Method != c.want || string(env.Params) != string(params) {
			t.Errorf("%s → %s %s, want %s with the params unchanged", c.u.SessionUpdate, env.Method, env.Params, c.want)
		}
	}
}

func TestACPTranslatePassesAnswersAndDropsWindow(t *testing.T) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"method":"session/new"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}`,
		`not json`,
		`[1,2]`,
	} {
		for _, incoming := range []bool{true, false} {
			if got := acpTranslate(incoming, []byte(body)); string(got) != body {
				t.Errorf("incoming=%v %s → %s", incoming, body, got)
			}
		}
	}
	if got := acpTranslate(false, []byte(`{"jsonrpc":"2.0","method":"window/showMessage","params":{"type":2,"message":"m"}}`)); got != nil {
		t.Errorf("window/showMessage reached the ACP client: %s", got)
	}
}

func TestACPTranslateCancelRequest(t *testing.T) {
	in := acpTranslate(true, []byte(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":7}}`))
	if !strings.Contains(string(in), `"method":"$/cancelRequest"`) || !strings.Contains(string(in), `"id":7`) || strings.Contains(string(in), "requestId") {
		t.Errorf("incoming cancel = %s", in)
	}
	out := acpTranslate(false, []byte(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x"}}`))
	if !strings.Contains(string(out), `"method":"$/cancel_request"`) || !strings.Contains(string(out), `"requestId":"x"`) {
		t.Errorf("outgoing cancel = %s", out)
	}
}

// acpHarness runs the ACP door in-process over pipes, one JSON message per line.
type acpHarness struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan map[string]any
	raw   chan string
	done  chan int
}

func startACP(t *testing.T, opts Options) *acpHarness {
	t.Helper()
	opts.ACP = true
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	srv := NewServer(opts)
	h := &acpHarness{t: t, in: cw, lines: make(chan map[string]any, 64), raw: make(chan string, 64), done: make(chan int, 1)}
	go func() {
		code, _ := srv.Serve(context.Background(), cr, sw)
		sw.Close()
		h.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(sr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			h.raw <- sc.Text()
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("a line of stdout is not JSON: %q", sc.Text())
				continue
			}
			h.lines <- m
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		cw.Close()
		select {
		case <-h.done:
		case <-time.After(5 * time.Second):
			t.Error("the ACP door did not end at the end of input")
		}
	})
	return h
}

func (h *acpHarness) send(v map[string]any) {
	v["jsonrpc"] = "2.0"
	b, _ := json.Marshal(v)
	if _, err := h.in.Write(append(b, '\n')); err != nil {
		h.t.Fatal(err)
	}
}

// answer waits for the answer to id, failing on anything that is not a session update.
func (h *acpHarness) answer(id float64) map[string]any {
	h.t.Helper()
	for {
		select {
		case m, ok := <-h.lines:
			if !ok {
				h.t.Fatal("output ended")
			}
			if m["id"] == id && m["method"] == nil {
				return m
			}
		case <-time.After(10 * time.Second):
			h.t.Fatalf("no answer to %v", id)
		}
	}
}

func TestACPInitializeAndAuthenticate(t *testing.T) {
	e := &engine{}
	store := config.NewStore()
	if err := store.Set(config.LayerUser, []byte(`{"provider":"remote","providers":{"remote":{"apiType":"openai","baseUrl":"https://models.example.com/v1","model":"m"}}}`)); err != nil {
		t.Fatal(err)
	}
	h := startACP(t, e.options(Options{Version: "1.2.3", Settings: store, Registry: checkingRegistry()}))
	// Before initialize, nothing else runs.
	h.send(map[string]any{"id": 1, "method": "session/new", "params": map[string]any{"cwd": "/tmp"}})
	if m := h.answer(1); m["error"] == nil {
		t.Fatalf("session/new before initialize answered %v", m)
	}
	h.send(map[string]any{"id": 2, "method": "initialize", "params": map[string]any{
		"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true,
			"auth": map[string]any{"terminal": true}},
		"clientInfo": map[string]any{"name": "zed", "version": "1"},
	}})
	m := h.answer(2)
	res, _ := json.Marshal(m["result"])
	var ir acpInitResult
	if err := json.Unmarshal(res, &ir); err != nil {
		t.Fatal(err)
	}
	if !ir.AgentCapabilities.MCPCapabilities.HTTP {
		t.Errorf("mcpCapabilities.http = false on the ACP door: %s", res)
	}
	if ir.ProtocolVersion != 1 || !ir.AgentCapabilities.LoadSession || ir.AgentInfo.Name != "agentd" || ir.AgentInfo.Version != "1.2.3" {
		t.Errorf("initialize = %s", res)
	}
	if len(ir.AuthMethods) != 1 || ir.AuthMethods[0].ID != "agentd-key" || ir.AuthMethods[0].Type != "terminal" ||
		strings.Join(ir.AuthMethods[0].Args, " ") != "key set" {
		t.Errorf("authMethods = %+v", ir.AuthMethods)
	}
	caps := e.bridge.caps
	if !caps.ACP || !caps.Agent.FS.ReadTextFile || !caps.WriteTextFile || !caps.Terminal || !caps.Agent.Permissions.UI || caps.ApplyEdit {
		t.Errorf("bridge capabilities = %+v", caps)
	}
	// The provider needs a key and has none: an auth error naming what to run.
	h.send(map[string]any{"id": 3, "method": "authenticate", "params": map[string]any{"methodId": "agentd-key"}})
	m = h.answer(3)
	em, _ := m["error"].(map[string]any)
	if em == nil || em["code"] != float64(CodeAuthRequired) || !strings.Contains(em["message"].(string), "agentd key set https://models.example.com/v1") {
		t.Errorf("authenticate without a key = %v", m)
	}
	h.send(map[string]any{"id": 4, "method": "authenticate", "params": map[string]any{"methodId": "other"}})
	if m := h.answer(4); m["error"] == nil {
		t.Errorf("unknown auth method accepted: %v", m)
	}
	// A session method by its ACP name reaches the engine; so does set_mode.
	h.send(map[string]any{"id": 5, "method": "session/new", "params": map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}})
	if m := h.answer(5); m["result"].(map[string]any)["sessionId"] != "s1" {
		t.Errorf("session/new = %v", m)
	}
	h.send(map[string]any{"id": 6, "method": "session/set_mode", "params": map[string]any{"sessionId": "s1", "modeId": "auto"}})
	if m := h.answer(6); m["error"] != nil {
		t.Errorf("session/set_mode = %v", m)
	}
	h.send(map[string]any{"id": 8, "method": "shutdown"})
	if m := h.answer(8); m["error"] == nil {
		t.Errorf("shutdown on the ACP door = %v", m)
	}
}

func TestACPAuthenticateWithKey(t *testing.T) {
	e := &engine{}
	store := config.NewStore()
	if err := store.Set(config.LayerUser, []byte(`{"provider":"local","providers":{"local":{"apiType":"openai","baseUrl":"http://127.0.0.1:9/v1","model":"m"}}}`)); err != nil {
		t.Fatal(err)
	}
	h := startACP(t, e.options(Options{Settings: store, Registry: checkingRegistry()}))
	h.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
	h.answer(1)
	h.send(map[string]any{"id": 2, "method": "authenticate", "params": map[string]any{"methodId": "agentd-key"}})
	if m := h.answer(2); m["error"] != nil {
		t.Errorf("authenticate with a provider that needs no key = %v", m)
	}
}

func TestACPUpdatesAreRenamedLines(t *testing.T) {
	e := &engine{}
	h := startACP(t, e.options(Options{}))
	h.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
	h.answer(1)
	h.send(map[string]any{"id": 2, "method": "session/load", "params": map[string]any{"sessionId": "s1", "cwd": t.TempDir(), "mcpServers": []any{}}})
	var update map[string]any
	for update == nil {
		select {
		case m := <-h.lines:
			if m["method"] != nil {
				update = m
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no update")
		}
	}
	if update["method"] != "session/update" {
		t.Errorf("update = %v", update)
	}
	_ = protocol.MethodSessionUpdate
}

func TestRestoreDuringATurnIsRequestFailed(t *testing.T) {
	var s Server
	err := s.wireError(protocol.MethodCheckpointsRestore, fmt.Errorf("session x: %w", session.ErrBusy))
	var we *jsonrpc.WireError
	if !errors.As(err, &we) || int(we.Code) != protocol.CodeRequestFailed || !strings.Contains(we.Message, "turn is running") {
		t.Fatalf("wire error %v", err)
	}
}

// The scanning path renames only the top-level method, leaves every other byte as the peer sent
// it (spacing, key order, a "method" inside params), passes answers as the very same bytes, and
// agrees with the decoding path on what the message says.
func TestACPTranslateRenamesInPlace(t *testing.T) {
	for _, c := range []struct {
		incoming bool
		in, want string
	}{
		{true, `{ "params" : {"method":"session/x","cwd":"/x"}, "id":1, "method" : "session/new", "jsonrpc":"2.0" }`,
			`{ "params" : {"method":"session/x","cwd":"/x"}, "id":1, "method" : "agent/session/new", "jsonrpc":"2.0" }`},
		{true, `{"jsonrpc":"2.0","id":"a","method":"_agentd/session/steer","params":{"text":"<b>"}}`,
			`{"jsonrpc":"2.0","id":"a","method":"agent/x/session/steer","params":{"text":"<b>"}}`},
		{false, `{"jsonrpc":"2.0","id":4,"method":"agent/fs/read_text_file","params":{"path":"/a b/é.txt"}}`,
			`{"jsonrpc":"2.0","id":4,"method":"fs/read_text_file","params":{"path":"/a b/é.txt"}}`},
		{true, `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}`},
	} {
		got := acpTranslate(c.incoming, []byte(c.in))
		if string(got) != c.want {
			t.Errorf("incoming=%v %s\n got %s\nwant %s", c.incoming, c.in, got, c.want)
		}
		// The decoding path says the same.
		var fast, slow map[string]any
		json.Unmarshal(got, &fast)
		var env map[string]json.RawMessage
		json.Unmarshal([]byte(c.in), &env)
		var m string
		json.Unmarshal(env["method"], &m)
		if c.incoming {
			if n, ok := acpIncoming(m); ok {
				env["method"], _ = json.Marshal(n)
			}
		} else if n, ok, _ := acpOutgoing(m); ok {
			env["method"], _ = json.Marshal(n)
		}
		b, _ := json.Marshal(env)
		json.Unmarshal(b, &slow)
		if fmt.Sprint(fast) != fmt.Sprint(slow) {
			t.Errorf("%s: scanning path %v, decoding path %v", c.in, fast, slow)
		}
	}
	answer := []byte(`{"jsonrpc":"2.0","id":4,"result":{"content":"hello\n"}}`)
	if got := acpTranslate(true, answer); &got[0] != &answer[0] || len(got) != len(answer) {
		t.Errorf("an answer was copied: %s", got)
	}
}

// A method written with escapes, or a duplicated "method", gets the same name the decoder reads.
func TestACPTranslateEscapedAndDuplicateMethods(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"session\/new","params":{}}`, "agent/session/new"},
		{`{"jsonrpc":"2.0","id":1,"method":"session/new","method":"session/prompt","params":{}}`, "agent/session/prompt"},
	} {
		got := acpTranslate(true, []byte(c.in))
		call, err := jsonrpc.DecodeRequest(got)
		if err != nil {
			t.Fatalf("%s → %s: %v", c.in, got, err)
		}
		if msg := call; call == nil || !call.IsCall() || call.Method() != c.want {
			t.Errorf("%s → %s, decoded as %#v, want method %q", c.in, got, msg, c.want)
		}
	}
}

// A notice reaches a client without session.notices as an agent_message_chunk holding its text
// (a standard client shows that, and drops an update or extension it does not know), and a client
// that advertised session.notices as ACP's own notice update, params unchanged.
func TestACPNoticeReachesEveryClient(t *testing.T) {
	params := protocol.AppendSessionNotification(nil, &protocol.SessionNotification{SessionID: "s1", Update: protocol.SessionUpdate{
		SessionUpdate: protocol.UpdateNotice, Severity: protocol.SeverityWarning, NoticeTitle: "rate limited, retrying in 8 s", Description: "the provider said 429",
	}})
	body := append([]byte(`{"jsonrpc":"2.0","method":"`+protocol.MethodSessionUpdate+`","params":`), params...)
	body = append(body, '}')

	var c acpCodec
	var got struct {
		Method string                       `json:"method"`
		Params protocol.SessionNotification `json:"params"`
	}
	if err := json.Unmarshal(c.translate(false, body), &got); err != nil {
		t.Fatal(err)
	}
	u := got.Params.Update
	if got.Method != "session/update" || got.Params.SessionID != "s1" || u.SessionUpdate != protocol.UpdateAgentMessageChunk || u.Content == nil ||
		!strings.Contains(u.Content.Text, "Warning: rate limited, retrying in 8 s\nthe provider said 429") {
		t.Errorf("notice to a client without session.notices = %+v", got)
	}
	// A message of its own: the agent's reply around it keeps its messageId, the notice has
	// another, and the next notice another again.
	first := u.MessageID
	json.Unmarshal(c.translate(false, body), &got)
	if !strings.HasPrefix(first, "notice_") || got.Params.Update.MessageID == first || !strings.HasPrefix(got.Params.Update.MessageID, "notice_") {
		t.Errorf("notice messageIds = %q then %q, want two distinct notice_ ids", first, got.Params.Update.MessageID)
	}

	c.notices.Store(true)
	var raw struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(c.translate(false, body), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Method != "session/update" || string(raw.Params) != string(params) {
		t.Errorf("notice to a client with session.notices = %s %s", raw.Method, raw.Params)
	}
	// Every other message is translated as before.
	if out := c.translate(true, []byte(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}`)); !strings.Contains(string(out), `"agent/session/new"`) {
		t.Errorf("session/new → %s", out)
	}
}

// ACP lets an agent offer a terminal auth method only to a client that advertised
// clientCapabilities.auth.terminal: any other client gets the same method as ACP's default kind,
// agent (no type, no args), never a terminal it cannot run.
func TestACPTerminalAuthOnlyWhenTheClientRunsIt(t *testing.T) {
	for _, c := range []struct {
		caps     map[string]any
		terminal bool
	}{
		{map[string]any{}, false},
		{map[string]any{"terminal": true}, false}, // terminal/* is not auth.terminal
		{map[string]any{"auth": map[string]any{"terminal": false}}, false},
		{map[string]any{"auth": map[string]any{"terminal": true}}, true},
	} {
		e := &engine{}
		opts := e.options(Options{})
		opts.ACP = true
		srv := NewServer(opts)
		raw, _ := json.Marshal(map[string]any{"protocolVersion": 1, "clientCapabilities": c.caps})
		res, err := srv.acpInitialize(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.(acpInitResult).AuthMethods)
		want := `[{"id":"agentd-key","name":"API key","description":"Store the API key of the current provider with ` +
			"`agentd key set URL`" + ` (in the system keyring)."}]`
		if c.terminal {
			want = strings.Replace(want, `}]`, `,"type":"terminal","args":["key","set"]}]`, 1)
		}
		if string(b) != want {
			t.Errorf("clientCapabilities %v: authMethods = %s, want %s", c.caps, b, want)
		}
	}
}

// initialize's clientCapabilities.session.notices decides how the door writes notices.
func TestACPInitializeReadsSessionNotices(t *testing.T) {
	for _, c := range []struct {
		caps map[string]any
		want bool
	}{
		{map[string]any{}, false},
		{map[string]any{"session": map[string]any{"notices": nil}}, false},
		{map[string]any{"session": map[string]any{"notices": map[string]any{}}}, true},
	} {
		e := &engine{}
		opts := e.options(Options{})
		opts.ACP = true
		srv := NewServer(opts)
		raw, _ := json.Marshal(map[string]any{"protocolVersion": 1, "clientCapabilities": c.caps})
		if _, err := srv.acpInitialize(context.Background(), raw); err != nil {
			t.Fatal(err)
		}
		if srv.acp.notices.Load() != c.want {
			t.Errorf("clientCapabilities %v: notices = %v, want %v", c.caps, !c.want, c.want)
		}
	}
}

// A turn that failed answers session/prompt with a JSON-RPC error whose message is what the user
// reads, never a silent end_turn; a missing key is ACP's auth_required.
func TestACPFailedTurnIsAnError(t *testing.T) {
	for _, c := range []struct {
		kind string
		code float64
	}{
		{"auth", CodeAuthRequired},
		{"unavailable", float64(jsonrpc.InternalError)},
	} {
		e := &engine{}
		h := startACP(t, e.options(Options{}))
		e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
			return protocol.PromptResult{StopReason: protocol.StopEndTurn, Meta: protocol.Meta{"agentd/error": protocol.ErrorMeta{Kind: c.kind, Message: "no API key for provider r"}}}, nil
		}
		h.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
		h.answer(1)
		h.send(map[string]any{"id": 2, "method": "session/prompt", "params": map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}})
		m := h.answer(2)
		em, _ := m["error"].(map[string]any)
		if em == nil || em["code"] != c.code || em["message"] != "The model request failed: no API key for provider r" || m["result"] != nil {
			t.Errorf("%s: failed turn answered %v", c.kind, m)
		}
		if d, _ := em["data"].(map[string]any); d["kind"] != c.kind {
			t.Errorf("%s: error data = %v", c.kind, em["data"])
		}
	}
	// A turn that did not fail still answers its stop reason.
	e := &engine{}
	h := startACP(t, e.options(Options{}))
	h.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
	h.answer(1)
	h.send(map[string]any{"id": 2, "method": "session/prompt", "params": map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}})
	if m := h.answer(2); m["error"] != nil || m["result"].(map[string]any)["stopReason"] != "end_turn" {
		t.Errorf("a good turn answered %v", m)
	}
}

// agentd offers no boolean config option: a boolean set_config_option is refused naming the
// option and what to send instead; a value id still reaches the engine.
// set_config_option's value is checked against its type on the ACP door: a boolean's must be a
// JSON boolean, a select's a value id (which option is which, the session checks).
func TestACPConfigOptionValueTypes(t *testing.T) {
	e := &engine{}
	h := startACP(t, e.options(Options{}))
	h.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
	h.answer(1)
	h.send(map[string]any{"id": 2, "method": "session/set_config_option", "params": map[string]any{"sessionId": "s1", "configId": "answer_review", "type": "boolean", "value": "yes"}})
	m := h.answer(2)
	em, _ := m["error"].(map[string]any)
	if em == nil || em["code"] != float64(-32602) || !strings.Contains(em["message"].(string), `expected a boolean`) {
		t.Errorf("boolean set_config_option with a string = %v", m)
	}
	h.send(map[string]any{"id": 3, "method": "session/set_config_option", "params": map[string]any{"sessionId": "s1", "configId": "mode", "value": 3}})
	if m := h.answer(3); m["error"] == nil || !strings.Contains(m["error"].(map[string]any)["message"].(string), "expected a value id") {
		t.Errorf("numeric value = %v", m)
	}
	h.send(map[string]any{"id": 4, "method": "session/set_config_option", "params": map[string]any{"sessionId": "s1", "configId": "mode", "value": "auto"}})
	if m := h.answer(4); m["error"] != nil {
		t.Errorf("value id = %v", m)
	}
}

// logout forgets the key agentd keeps for the current provider's origin, after which
// authenticate asks for one again; a key from the environment, which agentd does not keep, is
// named instead of a logout that did nothing.
func TestACPLogout(t *testing.T) {
	store := &keys.File{Path: filepath.Join(t.TempDir(), "keys.json")}
	if err := store.Set("https://models.example.com", "sk-stored"); err != nil {
		t.Fatal(err)
	}
	settings := config.NewStore()
	if err := settings.Set(config.LayerUser, []byte(`{"provider":"remote","providers":{"remote":{"apiType":"openai","baseUrl":"https://models.example.com/v1","model":"m","apiKeyEnv":"AGENTD_LOGOUT_TEST_KEY"}}}`)); err != nil {
		t.Fatal(err)
	}
	e := &engine{}
	h := startACP(t, e.options(Options{Settings: settings, Registry: checkingRegistry(), Secrets: store}))
	h.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": 1}})
	caps, _ := h.answer(1)["result"].(map[string]any)["agentCapabilities"].(map[string]any)
	if auth, _ := caps["auth"].(map[string]any); auth == nil || auth["logout"] == nil {
		t.Errorf("agentCapabilities = %v, want auth.logout", caps)
	}
	h.send(map[string]any{"id": 2, "method": "authenticate", "params": map[string]any{"methodId": "agentd-key"}})
	if m := h.answer(2); m["error"] != nil {
		t.Fatalf("authenticate with a stored key = %v", m)
	}
	h.send(map[string]any{"id": 3, "method": "logout", "params": map[string]any{}})
	if m := h.answer(3); m["error"] != nil {
		t.Errorf("logout = %v", m)
	}
	if _, ok, _ := store.Get("https://models.example.com"); ok {
		t.Error("the stored key is still there after logout")
	}
	h.send(map[string]any{"id": 4, "method": "authenticate", "params": map[string]any{"methodId": "agentd-key"}})
	if m := h.answer(4); m["error"] == nil {
		t.Errorf("authenticate after logout = %v, want auth_required", m)
	}

	t.Setenv("AGENTD_LOGOUT_TEST_KEY", "sk-env")
	h.send(map[string]any{"id": 5, "method": "logout"})
	m := h.answer(5)
	if em, _ := m["error"].(map[string]any); em == nil || !strings.Contains(em["message"].(string), "env AGENTD_LOGOUT_TEST_KEY") {
		t.Errorf("logout with a key from the environment = %v", m)
	}
}

// compaction_update goes to a client that advertised session.compaction as ACP's own update,
// its summary as a text content block; to others as the _agentd/ extension, unchanged.
func TestACPCompactionUpdate(t *testing.T) {
	params := protocol.AppendSessionNotification(nil, &protocol.SessionNotification{SessionID: "s1", Update: protocol.SessionUpdate{
		SessionUpdate: protocol.UpdateCompactionUpdate, CompactionID: "c1", Status: protocol.StatusCompleted, Summary: "We fixed a.txt.",
	}})
	body := append([]byte(`{"jsonrpc":"2.0","method":"`+protocol.MethodSessionUpdate+`","params":`), params...)
	body = append(body, '}')
	var c acpCodec
	var raw struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(c.translate(false, body), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Method != "_agentd/session/update" || string(raw.Params) != string(params) {
		t.Errorf("to a client without session.compaction: %s %s", raw.Method, raw.Params)
	}
	c.compaction.Store(true)
	out := c.translate(false, body)
	want := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"We fixed a.txt."}]}}}`
	if string(out) != want {
		t.Errorf("to a client with session.compaction:\n got %s\nwant %s", out, want)
	}
	e := &engine{}
	opts := e.options(Options{})
	opts.ACP = true
	srv := NewServer(opts)
	raw2, _ := json.Marshal(map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"session": map[string]any{"compaction": map[string]any{}}}})
	if _, err := srv.acpInitialize(context.Background(), raw2); err != nil || !srv.acp.compaction.Load() || srv.acp.notices.Load() {
		t.Errorf("initialize with session.compaction: compaction %v notices %v (%v)", srv.acp.compaction.Load(), srv.acp.notices.Load(), err)
	}
}
