package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/keys"
)

const keyUsage = `usage: agentd key set ORIGIN   store an API key for ORIGIN (asked for without echo, or read from stdin)
       agentd key get ORIGIN   say whether a key is stored for ORIGIN (its last four characters)
       agentd key rm ORIGIN    forget the key of ORIGIN

ORIGIN is the server's URL (https://api.openai.com, or any URL under it). agentd's own secret
store is the OS keyring (Secret Service, Keychain, Windows Credential Manager); where none
answers, a file of mode 0600 ($XDG_CONFIG_HOME/agentd/secrets.json; AGENTD_SECRET_STORE=file
chooses it). A key is filed under the origin (scheme://host[:port]) it was given for and is never
sent anywhere else. It is never an argument, so it stays out of the shell history and the process
list.
`

// runKey manages agentd's own secret store.
func runKey(args []string, stdin io.Reader, stdout, stderr io.Writer, store keys.Store) int {
	if len(args) != 2 || (args[0] != "set" && args[0] != "get" && args[0] != "rm") {
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
	if a, ok := store.(*keys.Auto); ok {
		if why := a.Fallback(); why != "" && args[0] != "get" {
			fmt.Fprintf(stderr, "agentd key: %s\n", why)
		}
	}
	switch args[0] {
	case "get":
		v, ok, err := store.Get(ep.Origin)
		if err != nil {
			fmt.Fprintf(stderr, "agentd key: %v\n", err)
			return 1
		}
		if !ok {
			fmt.Fprintf(stderr, "agentd: no key stored for %s in %s\n", ep.Origin, store.Where())
			return 1
		}
		fmt.Fprintf(stdout, "%s: a key ending in …%s is stored in %s\n", ep.Origin, tail(v), store.Where())
		return 0
	case "rm":
		if err := store.Delete(ep.Origin); err != nil {
			fmt.Fprintf(stderr, "agentd key: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "agentd: forgot the key for %s\n", ep.Origin)
		return 0
	}
	key, err := readKey(stdin, stderr, ep.Origin)
	if err != nil {
		fmt.Fprintf(stderr, "agentd key: reading the key: %v\n", err)
		return 1
	}
	if key == "" {
		fmt.Fprintln(stderr, "agentd key: no key given")
		return 2
	}
	if err := store.Set(ep.Origin, key); err != nil {
		fmt.Fprintf(stderr, "agentd key: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "agentd: stored the key for %s in %s\n", ep.Origin, store.Where())
	return 0
}

// readKey asks for the key on a terminal without echoing it, or reads one line from stdin when
// it is not a terminal (a pipe from a password manager).
func readKey(stdin io.Reader, stderr io.Writer, origin string) (string, error) {
	return readSecret(stdin, stderr, "API key for "+origin)
}

// readSecret asks for what (a key, a client secret) as readKey does.
func readSecret(stdin io.Reader, stderr io.Writer, what string) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(stderr, "%s (not shown): ", what)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		return strings.TrimSpace(string(b)), err
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// tail is the last four characters of a key, enough to tell two keys apart.
func tail(k string) string {
	r := []rune(k)
	if len(r) <= 8 {
		return "" // too short to show any of it
	}
	return string(r[len(r)-4:])
}
