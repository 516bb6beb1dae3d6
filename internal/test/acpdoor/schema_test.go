package acpdoor_test

// Every message agentd sends on the ACP door, checked against the official ACP v1 JSON schema
// (schema/v1/schema.json of the installed @agentclientprotocol/sdk package, never a copy in this
// repository): a raw NDJSON client drives the real binary through a turn with a read, an edit, a
// program and a tool of an HTTP MCP server the client passed in session/new, a mode change, a
// list, and a turn whose provider refuses the key; each line agentd wrote is validated as the
// schema type its method (or, for an answer, the method of the request it answers) names.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentd-dev/agentd/internal/test/testbin"
)

// acpSchema is the ACP v1 schema compiled once per test binary, by the $defs name of a type.
type acpSchema struct {
	c    *jsonschema.Compiler
	mu   sync.Mutex
	defs map[string]*jsonschema.Schema
}

func loadSchema(t *testing.T) *acpSchema {
	t.Helper()
	p := filepath.Join(sdkDir(t), "schema", "v1", "schema.json")
	f, err := os.Open(p)
	if err != nil {
		missing(t, "the ACP v1 schema is not at "+p+": "+err.Error()+" (scripts/test.sh installs @agentclientprotocol/sdk@"+acpSDKVersion+")")
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("acp-v1.json", doc); err != nil {
		t.Fatal(err)
	}
	return &acpSchema{c: c, defs: map[string]*jsonschema.Schema{}}
}

func (s *acpSchema) validate(def string, v json.RawMessage) error {
	s.mu.Lock()
	sch, ok := s.defs[def]
	if !ok {
		var err error
		if sch, err = s.c.Compile("acp-v1.json#/$defs/" + def); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("the schema has no type %s: %v", def, err)
		}
		s.defs[def] = sch
	}
	s.mu.Unlock()
	if len(v) == 0 {
		v = json.RawMessage("null")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// What agentd sends, by method: the params' schema type for its requests and notifications, the
// result's for its answers to ours.
var (
	agentSends = map[string]string{
		"session/update":             "SessionNotification",
		"session/request_permission": "RequestPermissionRequest",
		"fs/read_text_file":          "ReadTextFileRequest",
		"fs/write_text_file":         "WriteTextFileRequest",
		"terminal/create":            "CreateTerminalRequest",
		"terminal/output":            "TerminalOutputRequest",
		"terminal/wait_for_exit":     "WaitForTerminalExitRequest",
		"terminal/kill":              "KillTerminalRequest",
		"terminal/release":           "ReleaseTerminalRequest",
		"$/cancel_request":           "CancelRequestNotification",
		"elicitation/create":         "CreateElicitationRequest",
	}
	agentAnswers = map[string]string{
		"initialize":                "InitializeResponse",
		"authenticate":              "AuthenticateResponse",
		"session/new":               "NewSessionResponse",
		"session/load":              "LoadSessionResponse",
		"session/resume":            "ResumeSessionResponse",
		"session/list":              "ListSessionsResponse",
		"session/close":             "CloseSessionResponse",
		"session/delete":            "DeleteSessionResponse",
		"session/prompt":            "PromptResponse",
		"session/set_mode":          "SetSessionModeResponse",
		"session/set_config_option": "SetSessionConfigOptionResponse",
		"logout":                    "LogoutResponse",
	}
)

// checkMessage validates one line agentd wrote; asked maps the ids of the client's requests to
// their methods.
func (s *acpSchema) checkMessage(line []byte, asked map[string]string) error {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if m.JSONRPC != "2.0" {
		return fmt.Errorf("jsonrpc = %q", m.JSONRPC)
	}
	if m.Method != nil {
		method := *m.Method
		if strings.HasPrefix(method, "_") {
			return nil // an extension (ExtRequest / ExtNotification): any params
		}
		def, ok := agentSends[method]
		if !ok {
			return fmt.Errorf("method %q is not one ACP v1 lets an agent send", method)
		}
		if method == "session/update" && len(m.ID) > 0 {
			return fmt.Errorf("session/update sent as a request")
		}
		return s.validate(def, m.Params)
	}
	method, ok := asked[string(m.ID)]
	if !ok {
		return fmt.Errorf("an answer to id %s, which the client never sent", m.ID)
	}
	if (len(m.Result) > 0) == (len(m.Error) > 0) {
		return fmt.Errorf("an answer with both or neither of result and error")
	}
	if len(m.Error) > 0 {
		return s.validate("Error", m.Error)
	}
	def, ok := agentAnswers[method]
	if !ok {
		return nil // the answer to an extension method
	}
	return s.validate(def, m.Result)
}

// rawClient is an ACP client that writes and reads the NDJSON lines itself, keeping every line
// agentd wrote, and answers agentd's requests with answer.
type rawClient struct {
	t      *testing.T
	in     io.WriteCloser
	sc     *bufio.Scanner
	cmd    *exec.Cmd
	stderr bytes.Buffer
	nextID int
	asked  map[string]string
	lines  [][]byte
	answer func(method string, params json.RawMessage) (any, error)
	// early holds the answers read while waiting for another, by id as written.
	early map[string]rawAnswer
}

func startRaw(t *testing.T, bin, root string, env []string, answer func(string, json.RawMessage) (any, error)) *rawClient {
	t.Helper()
	c := &rawClient{t: t, asked: map[string]string{}, answer: answer, early: map[string]rawAnswer{}}
	c.cmd = exec.Command(bin, "acp")
	c.cmd.Dir, c.cmd.Env, c.cmd.Stderr = root, env, &c.stderr
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.sc = bufio.NewScanner(out)
	c.sc.Buffer(nil, 16<<20)
	t.Cleanup(func() {
		c.in.Close()
		done := make(chan error, 1)
		go func() { done <- c.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("agentd's stderr:\n%s", tail(c.stderr.String()))
		}
	})
	return c
}

func (c *rawClient) write(v map[string]any) {
	v["jsonrpc"] = "2.0"
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

type rawAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// call sends a request and reads lines until its answer, answering agentd's own requests on the
// way.
func (c *rawClient) call(method string, params any) rawAnswer {
	c.t.Helper()
	return c.wait(c.start(method, params))
}

// start sends a request and returns its id, for wait.
func (c *rawClient) start(method string, params any) int {
	c.nextID++
	c.asked[fmt.Sprint(c.nextID)] = method
	c.write(map[string]any{"id": c.nextID, "method": method, "params": params})
	return c.nextID
}

// wait reads lines until the answer to the request id, answering agentd's requests on the way.
func (c *rawClient) wait(n int) rawAnswer {
	c.t.Helper()
	return c.waitID(fmt.Sprint(n))
}

// waitID is wait for an id as it is written in JSON (a number, or a string with its quotes).
func (c *rawClient) waitID(id string) rawAnswer {
	c.t.Helper()
	if a, ok := c.early[id]; ok {
		delete(c.early, id)
		return a
	}
	for c.sc.Scan() {
		line := append([]byte(nil), c.sc.Bytes()...)
		c.lines = append(c.lines, line)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Fatalf("a line of stdout is not JSON: %.200q", line)
		}
		switch {
		case m.Method != "" && len(m.ID) > 0:
			res, err := c.answer(m.Method, m.Params)
			if err != nil {
				c.write(map[string]any{"id": m.ID, "error": map[string]any{"code": -32603, "message": err.Error()}})
			} else {
				c.write(map[string]any{"id": m.ID, "result": res})
			}
		case m.Method == "":
			var a rawAnswer
			json.Unmarshal(line, &a)
			if string(m.ID) == id {
				return a
			}
			c.early[string(m.ID)] = a
		}
	}
	c.t.Fatalf("agentd's output ended before the answer to %s: %v", c.asked[id], c.sc.Err())
	return rawAnswer{}
}

// editorAnswers is a client that serves reads and writes from the disk, allows every permission
// once, and runs terminals as child processes (each to its end before terminal/create answers).
func editorAnswers(t *testing.T) func(string, json.RawMessage) (any, error) {
	type term struct {
		out  string
		code int
	}
	terms := map[string]term{}
	return func(method string, params json.RawMessage) (any, error) {
		var p struct {
			Path       string   `json:"path"`
			Content    string   `json:"content"`
			Command    string   `json:"command"`
			Args       []string `json:"args"`
			Cwd        string   `json:"cwd"`
			TerminalID string   `json:"terminalId"`
			Options    []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		json.Unmarshal(params, &p)
		switch method {
		case "terminal/create":
			cmd := exec.Command(p.Command, p.Args...)
			cmd.Dir = p.Cwd
			out, _ := cmd.CombinedOutput()
			id := fmt.Sprintf("term-%d", len(terms)+1)
			terms[id] = term{string(out), cmd.ProcessState.ExitCode()}
			return map[string]any{"terminalId": id}, nil
		case "terminal/output":
			tm := terms[p.TerminalID]
			return map[string]any{"output": tm.out, "truncated": false, "exitStatus": map[string]any{"exitCode": tm.code}}, nil
		case "terminal/wait_for_exit":
			return map[string]any{"exitCode": terms[p.TerminalID].code}, nil
		case "terminal/kill", "terminal/release":
			return map[string]any{}, nil
		case "fs/read_text_file":
			b, err := os.ReadFile(p.Path)
			return map[string]any{"content": string(b)}, err
		case "fs/write_text_file":
			return map[string]any{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
		case "session/request_permission":
			for _, o := range p.Options {
				if o.Kind == "allow_once" {
					return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}, nil
				}
			}
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
		}
		return nil, fmt.Errorf("%s: not served by this client", method)
	}
}

// httpMCP serves an MCP server over Streamable HTTP on loopback that answers only requests
// carrying the header the client's session/new entry names, with one tool, lookup.
func httpMCP(t *testing.T) map[string]any {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "lookup", Description: "Look a word up.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "looked up over HTTP"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer per-session" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return map[string]any{"type": "http", "name": "docs", "url": ts.URL, "headers": []any{map[string]any{"name": "Authorization", "value": "Bearer per-session"}}}
}

func TestACPMessagesMatchTheSchema(t *testing.T) {
	schema := loadSchema(t)
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	// The first prompt runs scriptedProject's read, edit and program; the second calls the HTTP
	// MCP server's tool; the third reads a file of the session's additional directory; the
	// fourth would stream for a minute, and is cancelled by $/cancel_request.
	extra := filepath.Join(t.TempDir(), "other-root")
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(extra, "shared.txt"), []byte("text of the other root\n"), 0o644)
	root, env := scriptedProject(t, "Schema", "ran for the schema",
		map[string]any{"toolCalls": []any{map[string]any{"id": "m1", "name": "lookup", "args": map[string]any{}}}},
		map[string]any{"text": "Looked it up.", "stopReason": "end_turn"},
		map[string]any{"toolCalls": []any{map[string]any{"id": "x1", "name": "read_file", "args": map[string]any{"path": filepath.Join(extra, "shared.txt")}}}},
		map[string]any{"text": "Read it.", "stopReason": "end_turn"},
		map[string]any{"text": strings.Repeat("slowly ", 200), "chunkDelayMs": 300, "stopReason": "end_turn"})
	c := startRaw(t, bin, root, env, editorAnswers(t))

	init := c.call("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "schema-test", "version": "1"},
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}})
	var ir struct {
		AgentCapabilities struct {
			MCPCapabilities struct {
				HTTP bool `json:"http"`
			} `json:"mcpCapabilities"`
			SessionCapabilities struct {
				AdditionalDirectories *struct{} `json:"additionalDirectories"`
			} `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	if init.Error != nil || json.Unmarshal(init.Result, &ir) != nil || !ir.AgentCapabilities.MCPCapabilities.HTTP ||
		ir.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		t.Errorf("initialize = %s %+v: want mcpCapabilities.http true and sessionCapabilities.additionalDirectories", init.Result, init.Error)
	}
	c.call("authenticate", map[string]any{"methodId": "agentd-key"})
	ns := c.call("session/new", map[string]any{"cwd": root, "additionalDirectories": []string{extra}, "mcpServers": []any{httpMCP(t)}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	if ns.Error != nil || json.Unmarshal(ns.Result, &sess) != nil || sess.SessionID == "" {
		t.Fatalf("session/new = %s %+v", ns.Result, ns.Error)
	}
	prompt := func(text string) rawAnswer {
		return c.call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	}
	for _, text := range []string{"Fix a.txt and run echo.", "Look it up.", "Read the other root."} {
		if a := prompt(text); a.Error != nil || !strings.Contains(string(a.Result), `"stopReason":"end_turn"`) {
			t.Errorf("prompt %q = %s %+v", text, a.Result, a.Error)
		}
	}
	// $/cancel_request naming the pending prompt ends the turn as session/cancel does.
	slow := c.start("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "Talk slowly."}}})
	c.write(map[string]any{"method": "$/cancel_request", "params": map[string]any{"requestId": slow}})
	if a := c.wait(slow); a.Error != nil || !strings.Contains(string(a.Result), `"stopReason":"cancelled"`) {
		t.Errorf("a prompt cancelled by $/cancel_request answered %s %+v, want stopReason cancelled", a.Result, a.Error)
	}
	if a := c.call("session/set_mode", map[string]any{"sessionId": sess.SessionID, "modeId": "plan"}); a.Error != nil {
		t.Errorf("session/set_mode = %+v", a.Error)
	}
	c.call("session/set_config_option", map[string]any{"sessionId": sess.SessionID, "configId": "mode", "value": "ask"})
	c.call("session/list", map[string]any{})
	c.call("session/load", map[string]any{"sessionId": sess.SessionID, "cwd": root, "mcpServers": []any{}})
	if a := c.call("session/close", map[string]any{"sessionId": sess.SessionID}); a.Error != nil {
		t.Errorf("session/close = %+v", a.Error)
	}
	if a := c.call("session/resume", map[string]any{"sessionId": sess.SessionID, "cwd": root, "mcpServers": []any{}}); a.Error != nil {
		t.Errorf("session/resume = %+v", a.Error)
	}
	if a := c.call("session/delete", map[string]any{"sessionId": sess.SessionID}); a.Error != nil {
		t.Errorf("session/delete = %+v", a.Error)
	}
	var chunkIDs bool
	for _, line := range c.lines {
		chunkIDs = chunkIDs || (strings.Contains(string(line), `"agent_message_chunk"`) && strings.Contains(string(line), `"messageId":"`))
	}
	if !chunkIDs {
		t.Error("no agent_message_chunk carried a messageId")
	}
	if a := c.call("logout", map[string]any{}); a.Error != nil {
		t.Errorf("logout with a provider that needs no key = %+v", a.Error)
	}

	// The MCP server the client passed ran, with the client's header, and its tool's output
	// reached the client on a completed call; the mode change went as current_mode_update.
	var mcpRan, modeUpdate, readExtra, terminal bool
	for _, line := range c.lines {
		s := string(line)
		terminal = terminal || strings.Contains(s, `"method":"terminal/create"`)
		readExtra = readExtra || (strings.Contains(s, `"tool_call_update"`) && strings.Contains(s, `"completed"`) && strings.Contains(s, "text of the other root"))
		mcpRan = mcpRan || (strings.Contains(s, `"tool_call_update"`) && strings.Contains(s, `"completed"`) && strings.Contains(s, "looked up over HTTP"))
		modeUpdate = modeUpdate || (strings.Contains(s, `"current_mode_update"`) && strings.Contains(s, `"currentModeId":"plan"`))
	}
	if !mcpRan {
		t.Error("no completed tool call showed the HTTP MCP server's answer: the session's mcpServers entry was not honoured")
	}
	if !terminal {
		t.Error("the program did not run in the client's terminal")
	}
	if !readExtra {
		t.Error("no completed read of a file in the session's additionalDirectories")
	}
	if !modeUpdate {
		t.Error("session/set_mode sent no current_mode_update {currentModeId: plan}")
	}
	checkAll(t, schema, c)
	if len(c.lines) < 20 {
		t.Errorf("only %d messages were checked", len(c.lines))
	}
}

func checkAll(t *testing.T, schema *acpSchema, c *rawClient) {
	t.Helper()
	known := loadKnownKeys(t)
	for _, line := range c.lines {
		if err := schema.checkMessage(line, c.asked); err != nil {
			t.Errorf("a message agentd sent does not match the ACP v1 schema:\n%.600s\n%v", line, err)
		}
		if bad := known.check(line, c.asked); len(bad) > 0 {
			t.Errorf("a message agentd sent has keys the ACP v1 schema does not name, %v:\n%.600s", bad, line)
		}
	}
}

// A turn whose provider refuses the key answers session/prompt with ACP's auth_required error
// whose message the user reads, and the failure's notice reaches the client as text, or as ACP's
// notice update when the client advertised session.notices; every message matches the schema.
func TestACPFailedTurnMatchesTheSchema(t *testing.T) {
	schema := loadSchema(t)
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	root, env := scriptedProject(t, "Failing", "unused")
	env = refusingProvider(t, root, env)
	for _, notices := range []bool{false, true} {
		t.Run(fmt.Sprintf("notices=%v", notices), func(t *testing.T) { failedTurn(t, schema, bin, root, env, notices) })
	}
}

// refusingProvider points the settings scriptedProject wrote at an OpenAI-compatible server on
// loopback that refuses the key, and returns agentd's environment with that key set.
func refusingProvider(t *testing.T, root string, env []string) []string {
	t.Helper()
	writeRefusingSettings(t, filepath.Join(filepath.Dir(root), "config"))
	return append(env, "AGENTD_SCHEMA_TEST_KEY=sk-wrong")
}

// writeRefusingSettings writes, under the XDG config directory configHome, user settings whose
// provider is a server on loopback that answers every request 401 for its key
// ($AGENTD_SCHEMA_TEST_KEY).
func writeRefusingSettings(t *testing.T, configHome string) {
	t.Helper()
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	}))
	t.Cleanup(provider.Close)
	settings, _ := json.Marshal(map[string]any{"provider": "remote", "providers": map[string]any{"remote": map[string]any{
		"apiType": "openai", "baseUrl": provider.URL + "/v1", "model": "m", "apiKeyEnv": "AGENTD_SCHEMA_TEST_KEY"}}})
	if err := os.MkdirAll(filepath.Join(configHome, "agentd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(configHome, "agentd", "config.json"), settings, 0o644); err != nil {
		t.Fatal(err)
	}
}

func failedTurn(t *testing.T, schema *acpSchema, bin, root string, env []string, notices bool) {
	c := startRaw(t, bin, root, env, editorAnswers(t))
	caps := map[string]any{}
	if notices {
		caps["session"] = map[string]any{"notices": map[string]any{}}
	}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
	ns := c.call("session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(ns.Result, &sess)
	a := c.call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if a.Error == nil || a.Error.Code != -32000 || !strings.Contains(a.Error.Message, "The model request failed") || a.Result != nil {
		t.Errorf("a turn the provider refused answered %s %+v, want the auth_required error with the user's text", a.Result, a.Error)
	}
	var shown bool
	for _, line := range c.lines {
		s := string(line)
		if notices {
			shown = shown || (strings.Contains(s, `"method":"session/update"`) && strings.Contains(s, `"sessionUpdate":"notice"`) && strings.Contains(s, `"title":"The model request failed`))
		} else {
			shown = shown || (strings.Contains(s, `"method":"session/update"`) && strings.Contains(s, `"agent_message_chunk"`) && strings.Contains(s, "Error: The model request failed"))
		}
	}
	if !shown {
		t.Errorf("no session/update told the user the model request failed (notices %v)", notices)
	}
	checkAll(t, schema, c)
}

// The check fails a wrong field name, an unknown update kind and a wrong content type, and passes
// the right shape: a test above that passes means something.
func TestACPSchemaCatchesWrongShapes(t *testing.T) {
	schema := loadSchema(t)
	asked := map[string]string{"7": "session/prompt"}
	for _, c := range []struct {
		line string
		ok   bool
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","currentModeId":"plan"}}}`, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","modeId":"plan"}}}`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, true},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"txt","text":"hi"}}}}`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_mesage_chunk","content":{"type":"text","text":"hi"}}}}`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"session_id":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`, false},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"warning","title":"t"}}}`, true},
		{`{"jsonrpc":"2.0","method":"session/updates","params":{}}`, false},
		{`{"jsonrpc":"2.0","method":"_agentd/anything","params":{"x":1}}`, true},
		{`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn"}}`, true},
		{`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"done"}}`, false},
		{`{"jsonrpc":"2.0","id":7,"result":{"stop_reason":"end_turn"}}`, false},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"m"}}`, true},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32000}}`, false},
		{`{"jsonrpc":"2.0","id":8,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"sessionId":"s","mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"env":{"type":"string"}}}}}`, true},
		{`{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"sessionId":"s","mode":"url","message":"m","url":"https://a.example/x"}}`, false},
		{`{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"sessionId":"s","mode":"form","message":"m"}}`, false},
	} {
		err := schema.checkMessage([]byte(c.line), asked)
		if (err == nil) != c.ok {
			t.Errorf("%s: check said %v, want ok=%v", c.line, err, c.ok)
		}
	}
}

// knownKeys is a second check beside the schema's: the schema lets an object carry properties it
// does not name (few of its types close themselves), so a misspelt optional field (modeID, a
// stray snake_case key) would pass it. unknown walks an instance beside the raw schema and
// reports every object key that no branch of the schema at that point names, except under
// objects the schema leaves open (_meta, additionalProperties, free-form rawInput/rawOutput).
// The names come from the package's schema.unstable.json, the stable schema plus v1's unstable
// additions: agentd may send a field only an /unstable client reads (PromptResponse.usage),
// which a stable client drops, but never one ACP v1 does not name at all.
type knownKeys struct {
	defs map[string]any
}

func loadKnownKeys(t *testing.T) *knownKeys {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sdkDir(t), "schema", "v1", "schema.unstable.json"))
	if err != nil {
		missing(t, err.Error())
	}
	var doc struct {
		Defs map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return &knownKeys{defs: doc.Defs}
}

// branches flattens a schema node into the nodes that apply to the same instance: itself, its
// $ref's target, and every allOf / anyOf / oneOf branch, recursively.
func (k *knownKeys) branches(node any, out []map[string]any, depth int) []map[string]any {
	m, ok := node.(map[string]any)
	if !ok || depth > 32 {
		return out
	}
	out = append(out, m)
	if ref, ok := m["$ref"].(string); ok {
		out = k.branches(k.defs[strings.TrimPrefix(ref, "#/$defs/")], out, depth+1)
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		list, _ := m[key].([]any)
		for _, b := range list {
			out = k.branches(b, out, depth+1)
		}
	}
	return out
}

func (k *knownKeys) unknown(path string, node any, v any, report func(string)) {
	bs := k.branches(node, nil, 0)
	switch v := v.(type) {
	case map[string]any:
		closed := false
		for _, b := range bs {
			_, hasProps := b["properties"]
			closed = closed || hasProps
		}
		if !closed {
			return // free-form here (rawInput, rawOutput, an ExtNotification's params)
		}
		for key, val := range v {
			var sub []any
			open := false
			for _, b := range bs {
				if props, ok := b["properties"].(map[string]any); ok {
					if p, ok := props[key]; ok {
						sub = append(sub, p)
					}
				}
				if ap, ok := b["additionalProperties"]; ok && ap != false {
					open = true
					if apm, ok := ap.(map[string]any); ok {
						sub = append(sub, apm)
					}
				}
			}
			switch {
			case len(sub) == 0 && !open:
				report(path + "/" + key)
			case len(sub) > 0:
				k.unknown(path+"/"+key, map[string]any{"anyOf": sub}, val, report)
			}
		}
	case []any:
		var items []any
		for _, b := range bs {
			if it, ok := b["items"]; ok {
				items = append(items, it)
			}
		}
		if len(items) == 0 {
			return
		}
		for i, val := range v {
			k.unknown(fmt.Sprintf("%s/%d", path, i), map[string]any{"anyOf": items}, val, report)
		}
	}
}

// check reports the unknown keys of the params or result of one line agentd wrote.
func (k *knownKeys) check(line []byte, asked map[string]string) []string {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Params any             `json:"params"`
		Result any             `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil {
		return nil
	}
	var def string
	var v any
	switch {
	case m.Method != nil:
		def, v = agentSends[*m.Method], m.Params
	case m.Result != nil:
		def, v = agentAnswers[asked[string(m.ID)]], m.Result
	}
	if def == "" {
		return nil
	}
	var bad []string
	k.unknown(def, map[string]any{"$ref": "#/$defs/" + def}, v, func(p string) { bad = append(bad, p) })
	return bad
}

// The key check catches a misspelt optional field, which the schema alone lets through, also
// inside arrays, and leaves free-form objects (rawInput, _meta) alone.
func TestACPKeyCheckCatchesUnknownFields(t *testing.T) {
	schema, known := loadSchema(t), loadKnownKeys(t)
	asked := map[string]string{"7": "session/prompt"}
	for _, c := range []struct {
		line string
		bad  string // the unknown key's path, "" for none
	}{
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","status":"completed"}}}`, ""},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"t","stauts":"completed"}}}`, "SessionNotification/update/stauts"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"c","priority":"high","status":"pending","prio":1}]}}}`, "SessionNotification/update/entries/0/prio"},
		{`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","rawInput":{"anything":1},"_meta":{"agentd/x":{"y":2}}}}}`, ""},
		{`{"jsonrpc":"2.0","id":7,"result":{"stopReason":"end_turn","stop_reason":"end_turn"}}`, "PromptResponse/stop_reason"},
	} {
		if err := schema.checkMessage([]byte(c.line), asked); err != nil {
			t.Errorf("%s: the schema refused it (%v); the case is for the key check", c.line, err)
		}
		got := strings.Join(known.check([]byte(c.line), asked), ",")
		if got != c.bad {
			t.Errorf("%s: unknown keys %q, want %q", c.line, got, c.bad)
		}
	}
}

// A client that advertised session.compaction and session.notices gets /compact's progress as
// ACP's own compaction_update (the summary as content blocks), every message matching the schema.
func TestACPCompactionMatchesTheSchema(t *testing.T) {
	schema := loadSchema(t)
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	root, env := scriptedProject(t, "Compaction", "ran before compaction")
	c := startRaw(t, bin, root, env, editorAnswers(t))
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
		"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "session": map[string]any{"compaction": map[string]any{}, "notices": map[string]any{}}}})
	ns := c.call("session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(ns.Result, &sess)
	for _, text := range []string{"Fix a.txt and run echo.", "/compact"} {
		if a := c.call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}); a.Error != nil {
			t.Fatalf("prompt %q: %+v", text, a.Error)
		}
	}
	var inProgress, completed bool
	for _, line := range c.lines {
		s := string(line)
		if !strings.Contains(s, `"sessionUpdate":"compaction_update"`) {
			continue
		}
		if !strings.Contains(s, `"method":"session/update"`) {
			t.Errorf("a compaction_update to a client with session.compaction went elsewhere: %.300s", s)
		}
		inProgress = inProgress || strings.Contains(s, `"status":"in_progress"`)
		completed = completed || (strings.Contains(s, `"status":"completed"`) && strings.Contains(s, `"summary":[{"type":"text","text":`))
	}
	if !inProgress || !completed {
		t.Errorf("compaction updates: in_progress %v, completed with a summary %v", inProgress, completed)
	}
	checkAll(t, schema, c)
}

// A subagent's tool calls go to an ACP client as tool calls of the parent session, each with
// _meta["agentd/parentToolCallId"] naming the agent call, its text never as the parent's message;
// every message matches the schema.
func TestACPSubagentCallsMatchTheSchema(t *testing.T) {
	schema := loadSchema(t)
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	root, env := scriptedProject(t, "Subagent", "ran before the subagent",
		map[string]any{"toolCalls": []any{map[string]any{"id": "ag1", "name": "agent", "args": map[string]any{"description": "read notes", "prompt": "Read notes.txt and say what it holds."}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "cr1", "name": "read_file", "args": map[string]any{"path": "notes.txt"}}}},
		map[string]any{"text": "CHILD-ANSWER: the text on disk", "stopReason": "end_turn"},
		map[string]any{"text": "The notes hold the text on disk.", "stopReason": "end_turn"})
	c := startRaw(t, bin, root, env, editorAnswers(t))
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}})
	ns := c.call("session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(ns.Result, &sess)
	for _, text := range []string{"Fix a.txt and run echo.", "Explore the notes."} {
		if a := c.call("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": text}}}); a.Error != nil || !strings.Contains(string(a.Result), `"end_turn"`) {
			t.Fatalf("prompt %q: %s %+v", text, a.Result, a.Error)
		}
	}
	var nested, nestedDone, agentDone bool
	for _, line := range c.lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string         `json:"sessionId"`
				Update    map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "session/update" {
			continue
		}
		u := m.Params.Update
		meta, _ := u["_meta"].(map[string]any)
		// The replay provider makes the scripted ids unique (ag1_5).
		id, _ := u["toolCallId"].(string)
		parent, child, isChild := strings.Cut(id, "/")
		switch {
		case isChild && strings.HasPrefix(child, "cr1"):
			if m.Params.SessionID != sess.SessionID || meta["agentd/parentToolCallId"] != parent || !strings.HasPrefix(parent, "ag1") {
				t.Errorf("the child's call went out as %s", line)
			}
			nested = nested || u["sessionUpdate"] == "tool_call"
			nestedDone = nestedDone || u["status"] == "completed"
		case strings.HasPrefix(id, "ag1") && !isChild && u["status"] == "completed":
			agentDone = true
		case u["sessionUpdate"] == "agent_message_chunk":
			if text, _ := u["content"].(map[string]any)["text"].(string); strings.Contains(text, "CHILD-ANSWER") {
				t.Errorf("the child's text went out as the parent's message: %s", line)
			}
		}
	}
	if !nested || !nestedDone || !agentDone {
		t.Errorf("child tool_call %v, its completion %v, the agent call's completion %v", nested, nestedDone, agentDone)
	}
	checkAll(t, schema, c)
}
