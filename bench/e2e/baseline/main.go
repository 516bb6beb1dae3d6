// Command baseline is the floor under agentd's spawn → initialize figure: a static Go program
// that reads one initialize request in the door's framing (LSP Content-Length frames, or
// newline-delimited JSON with the argument "acp"), answers it, and exits at the end of its input.
// The e2e driver builds it and measures it interleaved with the real binaries, so what is left
// above it is agentd's own.
package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"

	"github.com/agentd-dev/agentd/bench/e2e/internal/frame"
)

func main() {
	acp := len(os.Args) > 1 && os.Args[1] == "acp"
	r := bufio.NewReader(os.Stdin)
	body, err := frame.Read(r, acp)
	if err != nil {
		os.Exit(1)
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &req) != nil || req.Method != "initialize" {
		os.Exit(1)
	}
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"capabilities": map[string]any{}}})
	os.Stdout.Write(frame.Append(nil, answer, acp))
	io.Copy(io.Discard, r)
}
