package inittest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/internal/test/testbin"
)

// TestNoGCBeforeIdle holds the daemon's way to its idle point (initialize, initialized,
// agent/session/new) to no garbage collection. Start-up allocates about 0.45 MB, far below the
// runtime's first heap goal (4 MB), so no cycle runs and nothing of the collector is ever
// touched. A cycle before idle costs far more memory than the heap it frees: its mark bits,
// work buffers and mark worker's stack made the idle daemon's anonymous memory 0.45 to 0.6 MiB
// larger (runtime.GC at the idle point, docs/benchmarks.md "Idle memory: the anonymous pages").
// A start-up that allocates megabytes (a file read whole, a table built eagerly) trips it: make
// that work lazy, or say in docs/benchmarks.md why it must run at every start.
func TestNoGCBeforeIdle(t *testing.T) {
	if gcs := cyclesBeforeIdle(t, ""); len(gcs) > 0 {
		t.Errorf("%d garbage collection(s) ran between start and the idle point:\n%s", len(gcs), strings.Join(gcs, "\n"))
	}
	// The detector itself: with GOGC=1 the first goal is a few tens of KB, and the package
	// inits alone pass it.
	if gcs := cyclesBeforeIdle(t, "GOGC=1"); len(gcs) == 0 {
		t.Error("with GOGC=1 no gctrace line was seen: the detector is broken")
	}
}

// gctraceLine is one line of GODEBUG=gctrace=1: "gc N @T s P%: …".
var gctraceLine = regexp.MustCompile(`^gc \d+ @`)

// cyclesBeforeIdle runs the static binary on the LSP door with gctrace through initialize,
// initialized and agent/session/new, closes its input once the session's answer is read, and
// returns the gctrace lines it printed. extra is one more environment variable, or "".
func cyclesBeforeIdle(t *testing.T, extra string) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	home, root := t.TempDir(), t.TempDir()
	// A hang guard, not a timing assertion: the exchange takes milliseconds.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "GOGC", k == "GOMEMLIMIT", k == "GODEBUG", k == "HOME", strings.HasPrefix(k, "XDG_"), strings.HasSuffix(k, "_API_KEY"):
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1", "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "c"), "XDG_STATE_HOME="+filepath.Join(home, "s"),
		"XDG_DATA_HOME="+filepath.Join(home, "d"), "XDG_CACHE_HOME="+filepath.Join(home, "k"))
	if extra != "" {
		cmd.Env = append(cmd.Env, extra)
	}
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
	out := bufio.NewReader(stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	settings := map[string]any{"provider": "fm", "providers": map[string]any{
		"fm": map[string]any{"apiType": "openai", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}}}
	// The initialize an editor sends (the settings under "agent", as bench/e2e sends them), with
	// its process id, which agentd watches.
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"processId": os.Getpid(), "capabilities": map[string]any{}, "initializationOptions": map[string]any{
			"agent": map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "inittest"},
				"clientCapabilities": map[string]any{}, "settings": settings}}}})
	answer(t, out, 1, &stderr)
	send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "agent/session/new", "params": map[string]any{"cwd": root, "mcpServers": []any{}}})
	answer(t, out, 2, &stderr)
	stdin.Close()
	go io.Copy(io.Discard, out) // the updates that follow the answer
	_ = cmd.Wait()              // end of input ends the daemon; its exit code is not the point
	var gcs []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if gctraceLine.MatchString(line) {
			gcs = append(gcs, line)
		}
	}
	return gcs
}

// answer reads frames until the response to id, and fails on an error response.
func answer(t *testing.T, r *bufio.Reader, id int, stderr *bytes.Buffer) {
	t.Helper()
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the answer to %d: %v\nstderr:\n%s", id, err, stderr.Bytes())
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if n < 0 {
			t.Fatalf("a frame without Content-Length before the answer to %d", id)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("frame %q: %v", body, err)
		}
		if m.ID == nil || *m.ID != id || m.Method != "" {
			continue
		}
		if len(m.Error) > 0 {
			t.Fatalf("request %d answered with an error: %s", id, m.Error)
		}
		return
	}
}
