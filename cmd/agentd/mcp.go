package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"text/tabwriter"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/tools"
)

const mcpUsage = `usage:
  agentd mcp list [-C DIR]   start the MCP servers of your settings, and print each one's state
                             and how many tools it lists and offers the model (after the rules:
                             reserved names, collisions, the budget of 12), then stop them
  agentd mcp login NAME      sign in to the HTTP server NAME of your settings (OAuth): prints the
                             link to open, waits for the browser, keeps the token in the OS keyring
  agentd mcp logout NAME     forget NAME's tokens
  agentd mcp secret NAME     keep the client secret of NAME's oauth client (its settings name
                             oauth.clientId, issuer and clientSecretKeyring: true), read without
                             echo or from stdin, in the OS keyring, filed by issuer and client ID

Servers a project file (DIR/.agentd/config.json) asks for are listed but not started: they start
only once you approve them in a session.
`

// runMCP is `agentd mcp list`, for a user debugging their MCP setup.
func runMCP(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("agentd mcp", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dir := fl.String("C", ".", "the project `DIR` whose settings apply")
	fl.Usage = func() { fmt.Fprint(stderr, mcpUsage); fl.PrintDefaults() }
	if len(args) > 0 && args[0] == "probe" { // hidden: the conformance suite's client (mcp_probe.go)
		return runMCPProbe(args[1:], stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "list" && args[0] != "login" && args[0] != "logout" && args[0] != "secret") {
		fl.Usage()
		return exitUsage
	}
	sub := args[0]
	if err := fl.Parse(args[1:]); err != nil || (sub == "list") != (fl.NArg() == 0) || fl.NArg() > 1 {
		if sub != "list" && err == nil {
			fmt.Fprintf(stderr, "agentd mcp %s: name one server (agentd mcp %s NAME)\n", sub, sub)
		}
		return exitUsage
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
		return exitUsage
	}
	store, reg := newSettings()
	if err := store.LoadFile(config.LayerUser, config.UserConfigPath()); err != nil {
		printErr(stderr, "agentd mcp", err)
		return exitFailed
	}
	if err := store.LoadFile(config.LayerProject, config.ProjectConfigPath(abs)); err != nil {
		printErr(stderr, "agentd mcp", err)
		return exitFailed
	}
	set := store.Get()
	if sub != "list" {
		return mcpAuth(sub, fl.Arg(0), set.MCPServers, set.ProjectMCPServers, stdout, stderr)
	}
	var cfgs []mcp.Config
	for i, raw := range set.MCPServers {
		c, err := mcp.Parse(fmt.Sprintf("mcpServers[%d]", i), raw)
		if err != nil {
			fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
			continue
		}
		cfgs = append(cfgs, c)
	}
	if len(cfgs) == 0 && len(set.ProjectMCPServers) == 0 {
		fmt.Fprintf(stdout, "no MCP servers configured (mcpServers in %s)\n", config.UserConfigPath())
		return 0
	}
	// The set reports from its start goroutines as well as from Snapshot.
	var notesMu sync.Mutex
	var notes []string
	pool := mcp.NewPool(nil)
	pool.HideEnv = func() []string { return append(reg.KeyEnvNames(set), mcp.SecretEnvNames(set.MCPServers)...) }
	pool.OAuth = mcpFlow()
	defer pool.Close()
	s := pool.Open(cfgs, tools.Default(), func(_, title, desc string) {
		notesMu.Lock()
		notes = append(notes, title+": "+desc)
		notesMu.Unlock()
	})
	s.Snapshot(context.Background())
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tTYPE\tSTATE\tTOOLS\tOFFERED\tTARGET")
	for _, st := range s.Status() {
		state := string(st.State)
		if st.Err != nil {
			state += " (" + mcp.Clean(st.Err.Error(), 120) + ")"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%s\n", mcp.Clean(st.Name, 64), st.Type, state, st.Listed, st.Offered, mcp.Clean(st.Target, 120))
	}
	for i, raw := range set.ProjectMCPServers {
		c, err := mcp.ParseProject(fmt.Sprintf("project mcpServers[%d]", i), raw)
		if err != nil {
			fmt.Fprintf(stderr, "agentd mcp: %v\n", err)
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t-\t-\t%s\n", mcp.Clean(c.Name, 64), c.Type, "project (asks before it starts)", mcp.Clean(c.Target(), 120))
	}
	w.Flush()
	s.Close()
	notesMu.Lock()
	defer notesMu.Unlock()
	for _, n := range notes {
		fmt.Fprintln(stdout, "note:", mcp.Clean(n, 2000))
	}
	return 0
}
