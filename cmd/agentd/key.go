package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/rpc"
)

const keyUsage = `usage: agentd key set URL < key   store the API key read from stdin for URL's origin
       agentd key rm URL          forget the key of URL's origin

agentd's own secret store ($XDG_CONFIG_HOME/agentd/secrets.json, mode 0600) files each key under
the origin (scheme://host:port) it was given for and never sends it anywhere else. The key is read
from stdin so it stays out of the shell history and the process list.
`

// runKey manages agentd's own secret store.
func runKey(args []string, stdin io.Reader, stderr io.Writer) int {
	if len(args) != 2 || (args[0] != "set" && args[0] != "rm") {
		fmt.Fprint(stderr, keyUsage)
		if len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return 0
		}
		return 2
	}
	ep, err := providers.CheckEndpoint(args[1])
	if err != nil {
		fmt.Fprintf(stderr, "agentd key: %v\n", err)
		return 2
	}
	store := rpc.DefaultSecretStore()
	key := ""
	if args[0] == "set" {
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && err != io.EOF {
			fmt.Fprintf(stderr, "agentd key: reading the key: %v\n", err)
			return 1
		}
		key = strings.TrimSpace(line)
		if key == "" {
			fmt.Fprintln(stderr, "agentd key: no key on stdin")
			return 2
		}
	}
	if err := store.Set(ep.Origin, key); err != nil {
		fmt.Fprintf(stderr, "agentd key: %v\n", err)
		return 1
	}
	if key == "" {
		fmt.Fprintf(stderr, "agentd: forgot the key for %s\n", ep.Origin)
	} else {
		fmt.Fprintf(stderr, "agentd: stored the key for %s in %s\n", ep.Origin, store.Path)
	}
	return 0
}
