package acceptance_test

// The anchor of TestInlineCompletionBenchmark: the least a sidecar can do for one inline
// completion in the completions dialect. It is this test binary run again as a child process
// (TestMain sees fimAnchorEnv), speaking the same framing over its stdin and stdout: one
// goroutine reads a request, sends the same HTTP request to the same fake server with a client
// that keeps its connection alive, and writes the answer. No JSON-RPC machinery, no reverse
// requests, no settings, no logging: what is left of a completion's round trip is the pipe,
// the loopback HTTP request and the kernel waking a process after the model's wait, measured
// beside agentd's on the same machine at the same moment.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/jsonrpc"
)

// fimAnchorEnv, set to the fake server's base URL, makes the test binary the anchor.
const fimAnchorEnv = "AGENTD_TEST_FIM_ANCHOR"

// anchorParams is what the benchmark sends the anchor: the request agentd gets, with the text
// around the cursor that agentd reads from the editor.
type anchorParams struct {
	Prompt string `json:"prompt"`
	Suffix string `json:"suffix"`
}

// runFIMAnchor serves the anchor's stdin until it ends; the exit code is the process's.
func runFIMAnchor(base string) int {
	in := bufio.NewReaderSize(os.Stdin, 8<<10)
	out := bufio.NewWriterSize(os.Stdout, 8<<10)
	client := &http.Client{} // http.DefaultTransport: keep-alive, one idle connection reused
	var buf []byte
	for {
		body, err := jsonrpc.ReadFrame(in, buf, jsonrpc.MaxContentLength)
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "anchor:", err)
			return 1
		}
		buf = body
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params anchorParams    `json:"params"`
		}
		if err := json.Unmarshal(body, &req); err != nil || len(req.ID) == 0 {
			continue // a notification: nothing to answer
		}
		result := []byte(`{}`)
		if req.Method == "textDocument/inlineCompletion" {
			text, err := anchorComplete(client, base, req.Params)
			if err != nil {
				fmt.Fprintln(os.Stderr, "anchor:", err)
				return 1
			}
			result, _ = json.Marshal(map[string]any{"items": []map[string]string{{"insertText": text}}})
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(msg), msg)
		if err := out.Flush(); err != nil {
			return 1
		}
	}
}

// anchorComplete makes the completions dialect's request, as agentd's engine makes it.
func anchorComplete(client *http.Client, base string, p anchorParams) (string, error) {
	data, _ := json.Marshal(map[string]any{"model": "coder-fim", "prompt": p.Prompt, "suffix": p.Suffix, "max_tokens": 128, "stream": false, "temperature": 0})
	resp, err := client.Post(base+"/completions", "application/json", bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	var out struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &out) != nil || len(out.Choices) == 0 {
		return "", fmt.Errorf("the server answered %d: %.200s", resp.StatusCode, raw)
	}
	return out.Choices[0].Text, nil
}

// startFIMAnchor runs the anchor against the fake server at base, behind a fake editor of its
// own: the editor side of its round trip is the same code as agentd's.
func startFIMAnchor(t *testing.T, base string) *fakeeditor.Editor {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fimAnchorEnv+"="+base)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		stdin.Close()
		<-exited
		if s := stderr.String(); s != "" {
			t.Errorf("the anchor wrote to stderr:\n%s", s)
		}
	})
	// Tee'd like agentd's stdout (startProc), so both round trips copy the same bytes.
	return fakeeditor.New(t, stdioRW{r: io.TeeReader(stdout, &syncBuffer{}), w: stdin}, fakeeditor.Full())
}
