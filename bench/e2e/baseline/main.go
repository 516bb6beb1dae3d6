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
	"strconv"
	"strings"
)

func main() {
	acp := len(os.Args) > 1 && os.Args[1] == "acp"
	r := bufio.NewReader(os.Stdin)
	body, err := read(r, acp)
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
	if acp {
		os.Stdout.Write(append(answer, '\n'))
	} else {
		os.Stdout.Write(append([]byte("Content-Length: "+strconv.Itoa(len(answer))+"\r\n\r\n"), answer...))
	}
	io.Copy(io.Discard, r)
}

// read returns the body of one message.
func read(r *bufio.Reader, acp bool) ([]byte, error) {
	if acp {
		return r.ReadBytes('\n')
	}
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				return nil, err
			}
		}
	}
	body := make([]byte, max(n, 0))
	_, err := io.ReadFull(r, body)
	return body, err
}
