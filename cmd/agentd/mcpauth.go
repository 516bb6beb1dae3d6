package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/providers/keys"
)

// mcpTokens is where MCP servers' OAuth tokens are kept: the OS keyring (service
// agentd-mcp-oauth), else mcp-oauth.json (mode 0600) in the config directory.
func mcpTokens() *keys.Named { return keys.DefaultNamed("agentd-mcp-oauth", "mcp-oauth") }

// mcpClientIDURL is agentd's OAuth Client ID Metadata Document, if the user names one; servers
// that take none are registered with dynamically.
func mcpClientIDURL() string { return os.Getenv("AGENTD_MCP_CLIENT_ID_URL") }

func mcpFlow() *mcpauth.Flow {
	return &mcpauth.Flow{Store: mcpTokens(), ClientIDURL: mcpClientIDURL()}
}

// mcpAuth is `agentd mcp login NAME` and `agentd mcp logout NAME`, for the user settings'
// servers (a project's server signs in from a session, once approved there).
func mcpAuth(sub, name string, user, project []json.RawMessage, stdout, stderr io.Writer) int {
	prefix := "agentd mcp " + sub
	var cfg *mcp.Config
	for i, raw := range user {
		c, err := mcp.Parse(fmt.Sprintf("mcpServers[%d]", i), raw)
		if err == nil && c.Name == name {
			cfg = &c
		}
	}
	if cfg == nil {
		for i, raw := range project {
			if c, err := mcp.Parse(fmt.Sprintf("project mcpServers[%d]", i), raw); err == nil && c.Name == name {
				fmt.Fprintf(stderr, "%s: %s comes from the project file; sign in to it from a session, once you approved it there\n", prefix, mcp.Clean(name, 64))
				return exitFailed
			}
		}
		fmt.Fprintf(stderr, "%s: no MCP server named %q in your settings\n", prefix, mcp.Clean(name, 64))
		return exitFailed
	}
	flow := mcpFlow()
	if sub == "logout" {
		if cfg.Type != "http" {
			fmt.Fprintf(stderr, "%s: %s is not an HTTP server; it has no sign-in\n", prefix, mcp.Clean(name, 64))
			return exitFailed
		}
		had, err := flow.SignOut(cfg.URL)
		if err != nil {
			printErr(stderr, prefix, err)
			return exitFailed
		}
		if !had {
			fmt.Fprintf(stdout, "no tokens were kept for %s\n", mcp.Clean(name, 64))
			return 0
		}
		fmt.Fprintf(stdout, "signed out of %s: its tokens are forgotten (%s)\n", mcp.Clean(name, 64), flow.Store.(*keys.Named).Where())
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	open := func(_ context.Context, url string) error {
		fmt.Fprintf(stdout, "To sign in to %s, open this link in your browser:\n\n  %s\n\n", mcp.Clean(name, 64), url)
		fmt.Fprintln(stderr, "waiting for the browser (Ctrl-C gives up)…")
		return nil
	}
	if err := mcp.SignIn(ctx, flow, *cfg, open); err != nil {
		printErr(stderr, prefix, err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "signed in to %s; the token is kept in %s\n", mcp.Clean(name, 64), flow.Store.(*keys.Named).Where())
	return 0
}
