package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/tools"
)

// runMCPProbe is the hidden `agentd mcp probe URL`: the client command the MCP conformance suite
// (@modelcontextprotocol/conformance) runs per client scenario. It connects to the Streamable
// HTTP server at URL through agentd's own MCP client (the pool, the four rules, the result
// conversion), lists its tools, resources and prompts, and calls the tools as the model would:
// the calls MCP_CONFORMANCE_CONTEXT's toolCalls name, or else each tool once with arguments made
// from its schema's required properties. A server's question is accepted with the schema's
// defaults (and true for a required boolean), as a user who agrees would. A server that asks for
// authorization is signed in to through agentd's OAuth flow, its "browser" an HTTP client that
// follows the authorization server's redirects (loopback only) back to the flow's listener, as a
// user who approves would; the tokens stay in memory for the run, never in the user's keyring.
// The user signs in when asked: again when the restarted server asks again (it moved to another
// authorization server), and once more, retrying the call once, when a call finds the token
// short (a step-up). A pre-registered client the scenario's context names (client_id,
// client_secret, issuer) is the server's oauth, as the user would write it in the settings.
// What it did is printed on stdout; a failure to connect exits 1.
func runMCPProbe(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: agentd mcp probe URL")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pool := mcp.NewPool(zap.NewNop())
	defer pool.Close()
	pool.StartTimeout = 20 * time.Second
	pool.OAuth = &mcpauth.Flow{Store: &mcpauth.MemoryStore{}, ClientIDURL: mcpClientIDURL(), CallbackTimeout: 20 * time.Second}
	var down []string
	cfg := mcp.Config{Name: "probe", Type: "http", URL: args[0], Timeout: 20 * time.Second, OAuth: contextClient()}
	set := pool.Open([]mcp.Config{cfg}, tools.NewRegistry(),
		func(sev, title, desc string) { down = append(down, title+": "+desc) })
	defer set.Close()
	reg := set.Snapshot(ctx)
	st := set.Status()
	// A user signs in when asked, and again when the restarted server asks again (it moved to
	// another authorization server): twice at most.
	for range 2 {
		if len(st) != 1 || !st[0].NeedsSignIn {
			break
		}
		if err := set.SignIn(ctx, "probe", probeBrowser); err != nil {
			fmt.Fprintf(stderr, "agentd mcp probe: signing in failed: %v\n", err)
			return exitFailed
		}
		fmt.Fprintln(stdout, "signed in")
		reg = set.Snapshot(ctx)
		st = set.Status()
	}
	if len(st) == 1 && st[0].State != mcp.StateReady {
		fmt.Fprintf(stderr, "agentd mcp probe: the server is %s: %v\n", st[0].State, st[0].Err)
		return exitFailed
	}
	env := &tools.Env{Elicit: acceptWithDefaults}
	byRemote := map[string]*mcp.Tool{}
	var order []*mcp.Tool
	for _, t := range reg.List() {
		if mt, ok := t.(*mcp.Tool); ok {
			byRemote[mt.RemoteName()] = mt
			order = append(order, mt)
		}
	}
	callTool := func(t *mcp.Tool, a map[string]any) {
		raw, _ := json.Marshal(a)
		res := t.Run(ctx, env, raw)
		if st := set.Status(); res.IsError && len(st) == 1 && st[0].NeedsSignIn {
			// The call found the token short (more scope, a new authorization server): the
			// user signs in again, as the session's sign-in action would have them, and the
			// call is tried once more.
			fmt.Fprintf(stdout, "call %s %s: %s\n", t.RemoteName(), raw, probeLine(res.Output))
			if err := set.SignIn(ctx, "probe", probeBrowser); err != nil {
				fmt.Fprintf(stdout, "signing in again failed: %s\n", probeLine(err.Error()))
				return
			}
			fmt.Fprintln(stdout, "signed in again")
			if again, ok := set.Snapshot(ctx).Lookup(t.Name()); ok {
				res = again.Run(ctx, env, raw)
			}
		}
		fmt.Fprintf(stdout, "call %s %s: error=%v %s\n", t.RemoteName(), raw, res.IsError, probeLine(res.Output))
	}
	fmt.Fprintf(stdout, "tools: %d\n", len(order))
	switch calls := contextCalls(); {
	case calls != nil:
		for _, c := range calls {
			if t := byRemote[c.Name]; t != nil {
				callTool(t, c.Arguments)
			} else {
				fmt.Fprintf(stdout, "call %s: not offered\n", c.Name)
			}
		}
	case os.Getenv("MCP_CONFORMANCE_SCENARIO") == "json-schema-2020-12-preservation":
		// The referee reads back, through its echo tool, the schema agentd kept of its focal tool.
		if focal, echo := byRemote["json_schema_2020_12_tool"], byRemote["json_schema_echo"]; focal != nil && echo != nil {
			var schema any
			_ = json.Unmarshal(focal.Schema(), &schema)
			callTool(echo, map[string]any{"schema": schema})
		}
	default:
		for _, t := range order {
			callTool(t, argumentsFor(t.Schema()))
		}
	}
	if cmds := set.Commands(); len(cmds) > 0 {
		_, _, err := set.Expand(ctx, "/"+cmds[0].Name)
		fmt.Fprintf(stdout, "prompt %s: %v\n", cmds[0].Name, err)
	}
	if rl, _ := set.Resources(ctx); len(rl) > 0 {
		text, err := set.ReadResource(ctx, rl[0].Server, rl[0].URI)
		fmt.Fprintf(stdout, "resource %s: %v %d bytes\n", rl[0].URI, err, len(text))
	}
	for _, d := range down {
		fmt.Fprintln(stdout, "notice: "+probeLine(d))
	}
	return 0
}

// contextClient is the pre-registered client MCP_CONFORMANCE_CONTEXT names (client_id,
// client_secret, issuer), as a user would write it in the server's settings; nil for none.
func contextClient() *mcp.OAuth {
	var c struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		Issuer       string `json:"issuer"`
	}
	if json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c) != nil || c.ClientID == "" {
		return nil
	}
	return &mcp.OAuth{ClientID: c.ClientID, ClientSecret: c.ClientSecret, Issuer: c.Issuer}
}

type probeCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// contextCalls are the tool calls the scenario's MCP_CONFORMANCE_CONTEXT names, nil for none.
func contextCalls() []probeCall {
	var c struct {
		ToolCalls []probeCall `json:"toolCalls"`
	}
	if json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &c) != nil {
		return nil
	}
	for i := range c.ToolCalls {
		if c.ToolCalls[i].Arguments == nil {
			c.ToolCalls[i].Arguments = map[string]any{}
		}
	}
	return c.ToolCalls
}

type probeSchema struct {
	Properties map[string]struct {
		Type    any `json:"type"`
		Default any `json:"default"`
	} `json:"properties"`
	Required []string `json:"required"`
}

// argumentsFor fills a schema's required properties: its default, else 1, "x" or true by type.
func argumentsFor(schema json.RawMessage) map[string]any {
	var s probeSchema
	_ = json.Unmarshal(schema, &s)
	out := map[string]any{}
	for _, name := range s.Required {
		p := s.Properties[name]
		switch {
		case p.Default != nil:
			out[name] = p.Default
		case p.Type == "number" || p.Type == "integer":
			out[name] = 1
		case p.Type == "boolean":
			out[name] = true
		default:
			out[name] = "x"
		}
	}
	return out
}

// acceptWithDefaults answers every question yes: a link is agreed to, a form is sent with its
// required booleans true (the SDK fills in the schema's defaults).
func acceptWithDefaults(_ context.Context, q tools.Elicitation) (tools.ElicitAnswer, error) {
	content := map[string]any{}
	if q.Mode == "form" {
		var s probeSchema
		_ = json.Unmarshal(q.Schema, &s)
		for _, name := range s.Required {
			if p := s.Properties[name]; p.Type == "boolean" && p.Default == nil {
				content[name] = true
			}
		}
	}
	return tools.ElicitAnswer{Action: "accept", Content: content}, nil
}

func probeLine(s string) string { return mcp.Clean(s, 300) }

// probeBrowser is the user who approves: it visits the authorization URL and follows its
// redirects to the flow's loopback listener. It visits only loopback hosts (the suite's servers
// and the listener), so a server cannot steer it anywhere else.
func probeBrowser(ctx context.Context, authURL string) error {
	u, err := url.Parse(authURL)
	if err != nil {
		return err
	}
	if err := probeLoopback(u); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		return probeLoopback(req.URL)
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return nil
}

// probeLoopback refuses a URL whose host is not a loopback address (or localhost).
func probeLoopback(u *url.URL) error {
	h := u.Hostname()
	if ip := net.ParseIP(h); (ip != nil && ip.IsLoopback()) || h == "localhost" {
		if u.Scheme == "http" || u.Scheme == "https" {
			return nil
		}
	}
	return fmt.Errorf("the probe's browser visits only loopback http(s) URLs, not %s", u.Redacted())
}
