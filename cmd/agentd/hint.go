package main

import (
	"fmt"
	"io"
	"os"

	"github.com/agentd-dev/agentd/cmd/agentd/internal/term"
)

const daemonHint = `agentd: this is the daemon an editor starts: it speaks JSON-RPC (LSP framing) on stdin and
stdout, and is now waiting for a client. To run the agent from a terminal, try
    agentd exec --demo
    agentd exec "why does TestParse fail?"
agentd --help lists the commands. Ctrl-D or Ctrl-C quits.
`

// terminalHint tells someone who started the daemon by hand what they are looking at. An editor
// gives it a pipe, never a terminal, so the daemon's own use is unchanged.
func terminalHint(stdin *os.File, w io.Writer) {
	if term.IsTerminal(stdin) {
		fmt.Fprint(w, daemonHint)
	}
}
