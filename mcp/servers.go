package mcp

import (
	"context"
	"fmt"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
)

// ServerInfo is one server of a set as the clients list it: its state, its tools (and whether
// each reaches the model) and its resources (for the clients' @server:uri mentions). Every
// string is cleaned.
type ServerInfo struct {
	Name, Type, Target string
	State              State
	Error              string
	// Auth is AuthNeeded or AuthSignedIn for a server that signs in (OAuth), "" otherwise.
	Auth      string
	Tools     []ToolInfo
	Resources []Resource
}

// A server's Auth.
const (
	AuthNeeded   = "needed"   // it asked for authorization and has no token: offer "Sign in"
	AuthSignedIn = "signedIn" // it holds a token of a sign-in: offer "Sign out"
)

// ToolInfo is one tool a server lists.
type ToolInfo struct {
	Name, Description string
	// Offered says the tool reaches the model (in the budget, or added by find_tools).
	Offered bool
}

// Servers lists the set's servers, in order, as of the last snapshot (Offered is false for
// every tool before the first); listing the resources is bounded by ctx.
func (s *Set) Servers(ctx context.Context) []ServerInfo {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	servers, snap := s.servers, s.snap
	s.mu.Unlock()
	offered := map[key]bool{}
	if snap != nil {
		for _, t := range snap.List() {
			if mt, ok := t.(*Tool); ok {
				offered[mt.key()] = true
			}
		}
	}
	out := make([]ServerInfo, 0, len(servers))
	for _, sv := range servers {
		sv.mu.Lock()
		typ := sv.cfg.Type
		if sv.cfg.SSE {
			typ = "sse"
		}
		info := ServerInfo{Name: Clean(sv.cfg.Name, maxLabel), Type: typ, Target: Clean(sv.cfg.Target(), maxURI), State: sv.state}
		if sv.err != nil {
			info.Error = Clean(fmt.Sprint(sv.err), 500)
		}
		switch {
		case sv.auth == nil:
		case mcpauth.IsNeedsSignIn(sv.err):
			info.Auth = AuthNeeded
		case sv.auth.SignedIn():
			info.Auth = AuthSignedIn
		}
		for _, t := range sv.tools {
			desc := t.Description
			if desc == "" {
				desc = t.Title
			}
			info.Tools = append(info.Tools, ToolInfo{Name: Clean(t.Name, maxLabel), Description: Clean(desc, MaxDescription), Offered: offered[key{sv.cfg.Name, t.Name}]})
		}
		ready := sv.state == StateReady
		sv.mu.Unlock()
		if ready {
			info.Resources, _ = sv.resources(ctx)
		}
		out = append(out, info)
	}
	return out
}
