// Command fakeoauth serves oauthtest's fake authorization server and the MCP server it protects on
// 127.0.0.1, for the editor clients' end-to-end tests: it prints one JSON line
// {"mcp": URL, "issuer": URL} on stdout and serves until its stdin ends. -expires sets the access
// tokens' lifetime in seconds.
package main

import (
	"encoding/json"
	"flag"
	"io"
	"os"

	"github.com/agentd-dev/agentd/mcp/mcpauth/oauthtest"
)

func main() {
	expires := flag.Int("expires", 3600, "access token lifetime in `seconds`")
	flag.Parse()
	s := oauthtest.New()
	s.ExpiresIn = *expires
	_ = json.NewEncoder(os.Stdout).Encode(map[string]string{"mcp": s.URL(), "issuer": s.AS.URL})
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Close()
}
