package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

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

// mcpStdin is where `agentd mcp secret` reads the secret.
var mcpStdin io.Reader = os.Stdin

// mcpSecret is `agentd mcp secret NAME`: it keeps the secret of the server's pre-registered
// client in the token store, filed by the client's issuer and ID (mcpauth.ClientSecretAccount),
// so it is sent only to that issuer. The secret is never printed.
func mcpSecret(flow *mcpauth.Flow, cfg mcp.Config, stdout, stderr io.Writer) int {
	name := mcp.Clean(cfg.Name, 64)
	if cfg.OAuth == nil || cfg.OAuth.ClientID == "" || !cfg.OAuth.ClientSecretKeyring {
		fmt.Fprintf(stderr, "agentd mcp secret: %s's settings name no oauth client kept by agentd (oauth: {clientId, issuer, clientSecretKeyring: true})\n", name)
		return exitFailed
	}
	secret, err := readSecret(mcpStdin, stderr, fmt.Sprintf("Client secret of %s at %s", mcp.Clean(cfg.OAuth.ClientID, 100), mcp.Clean(cfg.OAuth.Issuer, 200)))
	if err != nil {
		printErr(stderr, "agentd mcp secret", err)
		return exitFailed
	}
	if secret == "" || strings.ContainsAny(secret, "\r\n\x00") {
		fmt.Fprintln(stderr, "agentd mcp secret: no secret given (one line)")
		return exitFailed
	}
	if err := flow.Store.Set(mcpauth.ClientSecretAccount(cfg.OAuth.Issuer, cfg.OAuth.ClientID), secret); err != nil {
		printErr(stderr, "agentd mcp secret", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "kept the client secret of %s (client %s at %s) in %s\n", name, mcp.Clean(cfg.OAuth.ClientID, 100), mcp.Clean(cfg.OAuth.Issuer, 200), flow.Store.(*keys.Named).Where())
	return 0
}

// mcpAuth is `agentd mcp login NAME`, `agentd mcp logout NAME` and `agentd mcp secret NAME`, for
// the user settings' servers (a project's server signs in from a session, once approved there).
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
	if sub == "secret" {
		return mcpSecret(flow, *cfg, stdout, stderr)
	}
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
