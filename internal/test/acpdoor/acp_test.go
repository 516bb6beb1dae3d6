// Package acpdoor_test holds the ACP door (`agentd acp`) to ACP v1 as a real client reads it: the
// official TypeScript SDK, @agentclientprotocol/sdk 2.x (acpSDKVersion), drives the real binary through
// testdata/client.mjs, and its schema validation fails the run on any message of the wrong
// shape. scripts/test.sh installs the SDK into a cache outside the repository
// ($XDG_CACHE_HOME/agentd-acp); without it (or without node) the test skips, and fails when CI
// is set.
package acpdoor_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/internal/test/testbin"
)

// acpSDKVersion is the @agentclientprotocol/sdk release the tests run, the newest (scripts/test.sh
// installs the same).
const acpSDKVersion = "2.4.0"

// sdkDir finds the installed @agentclientprotocol/sdk package: under $AGENTD_ACP_SDK (a directory
// holding node_modules), else the cache scripts/test.sh installs into,
// $XDG_CACHE_HOME/agentd-acp/VERSION. An older release there is missing, not used.
func sdkDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENTD_ACP_SDK")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(cache, "agentd-acp", acpSDKVersion)
	}
	p := filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")
	install := " (scripts/test.sh installs it: npm install --prefix " + dir + " @agentclientprotocol/sdk@" + acpSDKVersion + ")"
	b, err := os.ReadFile(filepath.Join(p, "package.json"))
	if err != nil {
		missing(t, "the ACP SDK is not installed at "+p+install)
	}
	var pkg struct{ Version string }
	if json.Unmarshal(b, &pkg) != nil || !strings.HasPrefix(pkg.Version, "2.") {
		missing(t, "the ACP SDK at "+p+" is "+pkg.Version+", not a 2.x release"+install)
	}
	return p
}

// sdkPath is the SDK's stable ACP v1 entry point (package.json "exports"["."]).
func sdkPath(t *testing.T) string {
	return filepath.Join(sdkDir(t), "dist", "v1", "stable", "acp.js")
}

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

type update struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Title         string          `json:"title"`
	Kind          string          `json:"kind"`
	Status        string          `json:"status"`
	ToolCallID    string          `json:"toolCallId"`
	Content       json.RawMessage `json:"content"`
	CurrentModeID string          `json:"currentModeId"`
	Cost          *struct {
		Amount   float64 `json:"amount"`
		Currency string  `json:"currency"`
	} `json:"cost"`
	Meta  map[string]any    `json:"_meta"`
	Extra map[string]string `json:"-"`
}

type procLog struct {
	Initialize struct {
		ProtocolVersion int `json:"protocolVersion"`
		AuthMethods     []struct {
			ID, Type string
			Args     []string
		} `json:"authMethods"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	} `json:"initialize"`
	Authenticate string `json:"authenticate"`
	SetMode      string `json:"setMode"`
	SetBoolean   struct {
		ConfigOptions []struct {
			ID           string `json:"id"`
			Type         string `json:"type"`
			Category     string `json:"category"`
			CurrentValue any    `json:"currentValue"`
		} `json:"configOptions"`
	} `json:"setBoolean"`
	Updates     []update `json:"updates"`
	Permissions []struct {
		Title   string
		Kind    string
		Content []map[string]any
		Options []string
	} `json:"permissions"`
	Reads  []string `json:"reads"`
	Writes []struct {
		Path, Content string
	} `json:"writes"`
	Terminals []struct {
		Command  string
		Args     []string
		HidesKey bool
	} `json:"terminals"`
	Released []string `json:"released"`
	Turn     struct {
		StopReason string `json:"stopReason"`
	} `json:"turn"`
	Failed struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"failed"`
	SteerIdle map[string]any `json:"steerIdle"`
	SteerBusy map[string]any `json:"steerBusy"`
	Cancelled struct {
		StopReason string `json:"stopReason"`
	} `json:"cancelled"`
	CancelMs float64 `json:"cancelMs"`
	List     struct {
		Sessions []struct {
			SessionID string `json:"sessionId"`
		} `json:"sessions"`
	} `json:"list"`
	ExitCode int    `json:"exitCode"`
	Stdout   string `json:"stdout"`
}

func TestACPWithTheOfficialSDK(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	sdk := sdkPath(t)
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	slow := 300
	root, env := scriptedProject(t, "ACP", "ran in a terminal",
		map[string]any{"text": strings.Repeat("slowly ", 100), "chunkDelayMs": slow, "stopReason": "end_turn"})

	// The third process runs with settings whose provider refuses the key; the fourth with a
	// priced model whose turn reads a file of the session's second root.
	failing := t.TempDir()
	writeRefusingSettings(t, failing)
	pricedRoot, _, extra := pricedTwoRoots(t)
	cmd := exec.Command(node, filepath.Join("testdata", "client.mjs"))
	cmd.Env = append(env, "ACP_SDK="+sdk, "AGENTD_BIN="+bin, "ROOT="+root, "FAIL_CONFIG_HOME="+failing, "AGENTD_SCHEMA_TEST_KEY=sk-wrong",
		"PRICED_CONFIG_HOME="+filepath.Join(filepath.Dir(pricedRoot), "config"), "EXTRA="+extra)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the SDK client failed: %v\n%s", err, tail(stderr.String()))
	}
	var report struct {
		SessionID string    `json:"sessionId"`
		Processes []procLog `json:"processes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil || len(report.Processes) != 4 {
		t.Fatalf("report: %v\n%s\nstderr:\n%s", err, stdout.String(), tail(stderr.String()))
	}
	defer func() {
		if t.Failed() {
			t.Logf("agentd's stderr:\n%s", tail(stderr.String()))
		}
	}()
	first, second, third, fourth := report.Processes[0], report.Processes[1], report.Processes[2], report.Processes[3]

	// initialize and authenticate.
	in := first.Initialize
	if in.ProtocolVersion != 1 || !in.AgentCapabilities.LoadSession || len(in.AuthMethods) != 1 ||
		in.AuthMethods[0].ID != "agentd-key" || in.AuthMethods[0].Type != "terminal" || strings.Join(in.AuthMethods[0].Args, " ") != "key set" {
		t.Errorf("initialize = %+v", in)
	}
	if first.Authenticate != "ok" {
		t.Errorf("authenticate with a provider that needs no key = %s", first.Authenticate)
	}

	// The turn: the read served by the client, the edit asked with its diff and written by the
	// client, the program run in a client terminal.
	if first.Turn.StopReason != "end_turn" {
		t.Errorf("turn stopReason = %q", first.Turn.StopReason)
	}
	if !slices.Contains(first.Reads, filepath.Join(root, "notes.txt")) {
		t.Errorf("notes.txt was not read through fs/read_text_file; reads = %v", first.Reads)
	}
	var sawDiff bool
	for _, p := range first.Permissions {
		for _, c := range p.Content {
			if c["type"] == "diff" && c["path"] == filepath.Join(root, "a.txt") && c["oldText"] == "one\n" && c["newText"] == "two\n" {
				sawDiff = true
			}
		}
	}
	if !sawDiff {
		t.Errorf("no permission request carried the edit's diff: %+v", first.Permissions)
	}
	if len(first.Writes) != 1 || first.Writes[0].Path != filepath.Join(root, "a.txt") || first.Writes[0].Content != "two\n" {
		t.Errorf("fs/write_text_file calls = %+v", first.Writes)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "two\n" {
		t.Errorf("a.txt = %q", b)
	}
	if len(first.Terminals) != 1 || first.Terminals[0].Command != "echo" || !first.Terminals[0].HidesKey || len(first.Released) != 1 {
		t.Errorf("terminals = %+v, released %v", first.Terminals, first.Released)
	}
	var ranInTerminal bool
	for _, u := range first.Updates {
		if u.SessionUpdate == "tool_call_update" && u.Status == "completed" && strings.Contains(string(u.Content), "ran in a terminal") {
			ranInTerminal = true
		}
	}
	if !ranInTerminal {
		t.Error("no completed tool call shows the terminal's output")
	}
	// session/set_mode: answered, and the change reported as current_mode_update {currentModeId},
	// which the SDK's validation let through.
	var modeUpdate bool
	for _, u := range first.Updates {
		modeUpdate = modeUpdate || (u.SessionUpdate == "current_mode_update" && u.CurrentModeID == "plan")
	}
	if first.SetMode != "ok" || !modeUpdate {
		t.Errorf("session/set_mode = %s; a current_mode_update to plan arrived: %v", first.SetMode, modeUpdate)
	}

	// Steering with no turn running is refused; a cancel ends a turn whose model would stream for
	// half a minute more, as cancelled.
	if first.SteerIdle["accepted"] != false {
		t.Errorf("steer with no turn running = %v", first.SteerIdle)
	}
	if first.SteerBusy["accepted"] != true {
		t.Errorf("steer during a turn = %v", first.SteerBusy)
	}
	if first.Cancelled.StopReason != "cancelled" {
		t.Errorf("cancelled turn stopReason = %q", first.Cancelled.StopReason)
	}
	t.Logf("cancel → answer: %.1f ms (the bound of 100 ms is measured in bench/acp)", first.CancelMs)

	// A new process lists and replays the session.
	if len(second.List.Sessions) == 0 || second.List.Sessions[0].SessionID != report.SessionID {
		t.Errorf("session/list in a new process = %+v", second.List)
	}
	var replayedUser, replayedAgent bool
	for _, u := range second.Updates {
		replayedUser = replayedUser || u.SessionUpdate == "user_message_chunk"
		replayedAgent = replayedAgent || u.SessionUpdate == "agent_message_chunk"
	}
	if !replayedUser || !replayedAgent {
		t.Errorf("session/load replayed %d updates without both sides of the conversation", len(second.Updates))
	}

	// A third process whose provider refuses the key: the SDK's prompt rejects with the
	// auth_required error and the user's text, and the notice arrived as an agent message.
	if third.Failed.Code != -32000 || !strings.HasPrefix(third.Failed.Message, "The model request failed") {
		t.Errorf("a turn the provider refused: %+v, want the auth_required error with the user's text", third.Failed)
	}
	var failureShown bool
	for _, u := range third.Updates {
		failureShown = failureShown || (u.SessionUpdate == "agent_message_chunk" && strings.Contains(string(u.Content), "Error: The model request failed"))
	}
	if !failureShown {
		t.Error("no agent_message_chunk told the SDK's user the model request failed")
	}

	// The fourth: the read of the second root completed, the SDK validated every usage_update's
	// cost (the two calls' 0.003 and 0.0045, and the title's) and the boolean answer_review.
	if fourth.Turn.StopReason != "end_turn" {
		t.Errorf("the priced turn's stopReason = %q", fourth.Turn.StopReason)
	}
	var readExtra bool
	var costs []float64
	for _, u := range fourth.Updates {
		readExtra = readExtra || (u.SessionUpdate == "tool_call_update" && u.Status == "completed" && strings.Contains(string(u.Content), "text of the second root"))
		if u.SessionUpdate == "usage_update" && u.Cost != nil && u.Cost.Currency == "USD" {
			costs = append(costs, u.Cost.Amount)
		}
	}
	if !readExtra {
		t.Error("no completed tool call showed the file of the session's second root")
	}
	if len(costs) != 3 || !slices.IsSorted(costs) || !slices.ContainsFunc(costs, func(c float64) bool { return math.Abs(c-0.0075) < 1e-12 }) {
		t.Errorf("usage_update costs = %v, want three growing USD sums (the title's among them), one 0.0075", costs)
	}
	var review bool
	for _, o := range fourth.SetBoolean.ConfigOptions {
		review = review || (o.ID == "answer_review" && o.Type == "boolean" && o.Category == "model_config" && o.CurrentValue == true)
	}
	if !review {
		t.Errorf("set_config_option answer_review = %+v, want the model_config boolean true", fourth.SetBoolean)
	}

	// stdout carried nothing but NDJSON JSON-RPC messages, and both processes ended cleanly at
	// the end of their input.
	for i, p := range report.Processes {
		if p.ExitCode != 0 {
			t.Errorf("process %d exit code = %d", i+1, p.ExitCode)
		}
		if !strings.HasSuffix(p.Stdout, "\n") {
			t.Errorf("process %d: stdout does not end with a newline", i+1)
		}
		for _, line := range strings.Split(strings.TrimSuffix(p.Stdout, "\n"), "\n") {
			var m struct {
				JSONRPC string `json:"jsonrpc"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil || m.JSONRPC != "2.0" {
				t.Errorf("process %d: a stdout line is not a JSON-RPC message: %.200q", i+1, line)
			}
		}
	}
}

func tail(s string) string {
	if len(s) > 8000 {
		return "…" + s[len(s)-8000:]
	}
	return s
}
