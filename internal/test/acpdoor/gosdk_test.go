package acpdoor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd-dev/agentd/internal/test/testbin"
)

// goClient is an ACP client on a second, independent implementation of the protocol: the
// community Go SDK github.com/coder/acp-go-sdk, whose generated types validate what they
// receive. It serves reads from a "buffer", writes to disk, runs terminals as child processes,
// allows every permission, and records what it saw.
type goClient struct {
	root string

	mu          sync.Mutex
	updates     []acp.SessionUpdate
	extensions  []string // method + params of every extension notification
	permissions []acp.RequestPermissionRequest
	reads       []string
	writes      map[string]string
	terminals   map[string]*goTerminal
}

type goTerminal struct {
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan struct{}
	code int
}

func (c *goClient) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	c.mu.Lock()
	c.reads = append(c.reads, p.Path)
	c.mu.Unlock()
	if filepath.Base(p.Path) == "notes.txt" {
		return acp.ReadTextFileResponse{Content: "the text in the client's buffer\n"}, nil
	}
	b, err := os.ReadFile(p.Path)
	return acp.ReadTextFileResponse{Content: string(b)}, err
}

func (c *goClient) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	c.mu.Lock()
	c.writes[p.Path] = p.Content
	c.mu.Unlock()
	return acp.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}

func (c *goClient) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.permissions = append(c.permissions, p)
	c.mu.Unlock()
	for _, o := range p.Options {
		if o.Kind == acp.PermissionOptionKindAllowOnce {
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *goClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n.Update)
	c.mu.Unlock()
	return nil
}

func (c *goClient) HandleExtensionMethod(_ context.Context, method string, params json.RawMessage) (any, error) {
	c.mu.Lock()
	c.extensions = append(c.extensions, method+" "+string(params))
	c.mu.Unlock()
	return nil, nil
}

func (c *goClient) CreateTerminal(_ context.Context, p acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	cmd := exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	t := &goTerminal{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &t.out, &t.out
	if err := cmd.Start(); err != nil {
		return acp.CreateTerminalResponse{}, err
	}
	go func() { _ = cmd.Wait(); t.code = cmd.ProcessState.ExitCode(); close(t.done) }()
	c.mu.Lock()
	id := "t" + string(rune('0'+len(c.terminals)))
	c.terminals[id] = t
	c.mu.Unlock()
	return acp.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *goClient) terminal(id string) (*goTerminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.terminals[id]; t != nil {
		return t, nil
	}
	return nil, errors.New("no terminal " + id)
}

func (c *goClient) WaitForTerminalExit(ctx context.Context, p acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return acp.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return acp.WaitForTerminalExitResponse{}, ctx.Err()
	}
	code := t.code
	return acp.WaitForTerminalExitResponse{ExitCode: &code}, nil
}

func (c *goClient) TerminalOutput(_ context.Context, p acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return acp.TerminalOutputResponse{}, err
	}
	<-t.done
	code := t.code
	return acp.TerminalOutputResponse{Output: t.out.String(), ExitStatus: &acp.TerminalExitStatus{ExitCode: &code}}, nil
}

func (c *goClient) KillTerminal(_ context.Context, p acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	if t, err := c.terminal(p.TerminalId); err == nil {
		_ = t.cmd.Process.Kill()
	}
	return acp.KillTerminalResponse{}, nil
}

func (c *goClient) ReleaseTerminal(_ context.Context, p acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	c.mu.Lock()
	delete(c.terminals, p.TerminalId)
	c.mu.Unlock()
	return acp.ReleaseTerminalResponse{}, nil
}

// startGo starts `agentd acp` with env and connects a goClient to it.
func startGo(t *testing.T, bin, root string, env []string) (*acp.ClientSideConnection, *goClient, *exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, "acp")
	cmd.Dir, cmd.Env = root, env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agentd's stderr:\n%s", tail(stderr.String()))
		}
	})
	c := &goClient{root: root, writes: map[string]string{}, terminals: map[string]*goTerminal{}}
	return acp.NewClientSideConnection(c, stdin, stdout), c, cmd, &stderr
}

// A scripted session through the Go SDK: initialize, a session whose MCP server cannot start (its
// notice arrives as an agent_message_chunk with its text, as this client did not advertise
// session.notices: a standard client shows it), a turn with a read served by the
// client, an edit asked with its diff and written by the client, a program in a client terminal,
// steering refused when idle, and listing and loading the session in a new process.
func TestACPWithTheGoSDK(t *testing.T) {
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	root, env := scriptedProject(t, "Go SDK", "ran in a Go terminal")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	conn, client, _, _ := startGo(t, bin, root, env)
	in, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true,
			Auth: acp.AuthCapabilities{Terminal: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if in.ProtocolVersion != acp.ProtocolVersionNumber || !in.AgentCapabilities.LoadSession {
		t.Errorf("initialize = %+v", in)
	}
	if !in.AgentCapabilities.McpCapabilities.Http || in.AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		t.Errorf("agentCapabilities = %+v, want mcpCapabilities.http and sessionCapabilities.additionalDirectories", in.AgentCapabilities)
	}
	if len(in.AuthMethods) != 1 || in.AuthMethods[0].Terminal == nil || in.AuthMethods[0].Terminal.Id != "agentd-key" ||
		!slices.Equal(in.AuthMethods[0].Terminal.Args, []string{"key", "set"}) {
		t.Errorf("authMethods = %+v", in.AuthMethods)
	}
	if _, err := conn.Authenticate(ctx, acp.AuthenticateRequest{MethodId: "agentd-key"}); err != nil {
		t.Errorf("authenticate with a provider that needs no key: %v", err)
	}

	broken := acp.McpServer{Stdio: &acp.McpServerStdio{Name: "broken", Command: filepath.Join(root, "no-such-server"), Args: []string{}, Env: []acp.EnvVariable{}}}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, AdditionalDirectories: []string{t.TempDir()}, McpServers: []acp.McpServer{broken}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("Fix a.txt and run echo.")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != acp.StopReasonEndTurn {
		t.Errorf("stopReason = %q", res.StopReason)
	}
	steer, err := conn.CallExtension(ctx, "_agentd/session/steer", map[string]any{"sessionId": sess.SessionId, "prompt": []any{map[string]any{"type": "text", "text": "also this"}}})
	if err != nil || !strings.Contains(string(steer), `"accepted":false`) {
		t.Errorf("steer with no turn running = %s, %v", steer, err)
	}

	client.mu.Lock()
	if !slices.Contains(client.reads, filepath.Join(root, "notes.txt")) {
		t.Errorf("notes.txt was not read through fs/read_text_file: reads %v", client.reads)
	}
	var sawDiff bool
	for _, p := range client.permissions {
		for _, c := range p.ToolCall.Content {
			if d := c.Diff; d != nil && d.Path == filepath.Join(root, "a.txt") && d.OldText != nil && *d.OldText == "one\n" && d.NewText == "two\n" {
				sawDiff = true
			}
		}
	}
	if !sawDiff {
		t.Errorf("no permission request carried the edit's diff (%d requests)", len(client.permissions))
	}
	if got := client.writes[filepath.Join(root, "a.txt")]; got != "two\n" {
		t.Errorf("fs/write_text_file of a.txt = %q (writes %v)", got, client.writes)
	}
	var ranInTerminal, sawText bool
	for _, u := range client.updates {
		if tc := u.ToolCallUpdate; tc != nil && tc.Status != nil && *tc.Status == acp.ToolCallStatusCompleted {
			b, _ := json.Marshal(tc.Content)
			ranInTerminal = ranInTerminal || strings.Contains(string(b), "ran in a Go terminal")
		}
		if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil && strings.Contains(m.Content.Text.Text, "Done.") {
			sawText = true
		}
	}
	if !ranInTerminal || !sawText {
		t.Errorf("updates: program output in a completed call %v, the answer's text %v (%d updates)", ranInTerminal, sawText, len(client.updates))
	}
	var notice bool
	for _, u := range client.updates {
		if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil && strings.Contains(m.Content.Text.Text, "Warning: ") && strings.Contains(m.Content.Text.Text, "broken") {
			notice = true
		}
	}
	if !notice {
		t.Errorf("no agent_message_chunk told the user that the MCP server broken could not start")
	}
	for _, e := range client.extensions {
		if strings.Contains(e, `"sessionUpdate":"notice"`) {
			t.Errorf("a notice went as an extension a standard client drops: %s", e)
		}
	}
	for _, e := range client.extensions {
		if strings.Contains(e, "editor_state") {
			t.Errorf("the ACP door asked for the editor's state, which ACP has no request for: %s", e)
		}
	}
	client.mu.Unlock()

	// A new process lists the session and replays it.
	conn2, client2, _, _ := startGo(t, bin, root, env)
	if _, err := conn2.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	list, err := conn2.ListSessions(ctx, acp.ListSessionsRequest{})
	if err != nil || len(list.Sessions) == 0 || list.Sessions[0].SessionId != sess.SessionId {
		t.Fatalf("session/list in a new process = %+v, %v", list, err)
	}
	if _, err := conn2.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: root, McpServers: []acp.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	client2.mu.Lock()
	var user, agent bool
	for _, u := range client2.updates {
		user = user || u.UserMessageChunk != nil
		agent = agent || u.AgentMessageChunk != nil
	}
	client2.mu.Unlock()
	if !user || !agent {
		t.Errorf("session/load replayed no user or no agent message")
	}
}

// A turn whose provider refuses the key, through the Go SDK: the prompt fails with the
// auth_required error carrying the text the user reads, and the failure's notice arrived as an
// agent_message_chunk, never a silent end_turn.
func TestACPGoSDKSeesAFailedTurn(t *testing.T) {
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	root, env := scriptedProject(t, "Go SDK failing", "unused")
	env = refusingProvider(t, root, env)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, client, _, _ := startGo(t, bin, root, env)
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi")}})
	var re *acp.RequestError
	if !errors.As(err, &re) || re.Code != -32000 || !strings.HasPrefix(re.Message, "The model request failed") {
		t.Fatalf("prompt with a refused key = %+v, %v; want the auth_required error with the user's text", res, err)
	}
	// The notice was written before the answer; the SDK may hand it to the client a moment after.
	shown := func() bool {
		client.mu.Lock()
		defer client.mu.Unlock()
		for _, u := range client.updates {
			if m := u.AgentMessageChunk; m != nil && m.Content.Text != nil && strings.Contains(m.Content.Text.Text, "Error: The model request failed") {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); !shown() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !shown() {
		t.Error("no agent_message_chunk told the user the model request failed")
	}
}

// A priced turn in a session with a second root, and a mode change, through the Go SDK: the
// read of the second root's file completes, every usage_update the SDK decoded carries the
// session's growing cost in USD (the turn's calls and the title's), and set_mode reaches the
// client as current_mode_update {currentModeId}.
func TestACPGoSDKModeCostAndRoots(t *testing.T) {
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	root, env, extra := pricedTwoRoots(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, client, _, _ := startGo(t, bin, root, env)
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: root, AdditionalDirectories: []string{extra}, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("Read the second root.")}})
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if _, err := conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: sess.SessionId, ModeId: "plan"}); err != nil {
		t.Fatalf("set_mode: %v", err)
	}
	// The title's usage_update and the mode's update come after the answers that caused them.
	seen := func() (read, mode bool, costs []acp.Cost) {
		client.mu.Lock()
		defer client.mu.Unlock()
		for _, u := range client.updates {
			if tc := u.ToolCallUpdate; tc != nil && tc.Status != nil && *tc.Status == acp.ToolCallStatusCompleted {
				b, _ := json.Marshal(tc.Content)
				read = read || strings.Contains(string(b), "text of the second root")
			}
			mode = mode || (u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "plan")
			if uu := u.UsageUpdate; uu != nil && uu.Cost != nil {
				costs = append(costs, *uu.Cost)
			}
		}
		return read, mode, costs
	}
	deadline := time.Now().Add(5 * time.Second)
	read, mode, costs := seen()
	for (!mode || len(costs) < 3) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		read, mode, costs = seen()
	}
	if !read {
		t.Error("no completed tool call showed the second root's file")
	}
	if !mode {
		t.Error("set_mode sent no current_mode_update the SDK decoded with currentModeId plan")
	}
	// Two turn calls (0.003 and 0.0045) and the title request: three growing USD sums.
	if len(costs) != 3 {
		t.Fatalf("usage_update costs = %+v, want three (two calls and the title)", costs)
	}
	prev := 0.0
	for _, c := range costs {
		if c.Currency != "USD" || c.Amount <= prev {
			t.Errorf("costs = %+v, want growing USD sums", costs)
		}
		prev = c.Amount
	}
	if math.Abs(costs[1].Amount-0.0075) > 1e-12 && math.Abs(costs[2].Amount-0.0075) > 1e-12 {
		t.Errorf("costs = %+v: no sum is the turn's 0.0075", costs)
	}
}

// pricedTwoRoots is a project whose model costs 2 and 10 (USD per million tokens in and out)
// and whose turn reads shared.txt of a second root, extra (1000 tokens in, 100 out: 0.003),
// then answers (2000 in, 50 out: 0.0045).
func pricedTwoRoots(t *testing.T) (root string, env []string, extra string) {
	t.Helper()
	extra = filepath.Join(t.TempDir(), "second-root")
	if err := os.MkdirAll(extra, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(extra, "shared.txt"), []byte("text of the second root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, env = kitProject(t,
		map[string]any{"toolCalls": []any{map[string]any{"id": "x1", "name": "read_file", "args": map[string]any{"path": filepath.Join(extra, "shared.txt")}}},
			"usage": map[string]any{"input": 1000, "output": 100}},
		map[string]any{"text": "Read it.", "stopReason": "end_turn", "usage": map[string]any{"input": 2000, "output": 50}})
	priced(t, root, map[string]any{"input": 2, "output": 10})
	return root, env, extra
}

// priced gives the replay model of kitProject's settings a price (per million tokens).
func priced(t *testing.T, root string, price map[string]any) {
	t.Helper()
	cfg := filepath.Join(filepath.Dir(root), "config", "agentd", "config.json")
	var settings map[string]any
	b, err := os.ReadFile(cfg)
	if err != nil || json.Unmarshal(b, &settings) != nil {
		t.Fatalf("settings: %v", err)
	}
	settings["models"] = map[string]any{"replay-model": map[string]any{"price": price}}
	b, _ = json.Marshal(settings)
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
