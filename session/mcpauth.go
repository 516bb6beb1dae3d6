package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/protocol"
)

// MCP sign-in (mcp/mcpauth): a server whose start found no token is announced by a notice the
// client turns into a "Sign in" action (agent/mcp/signIn); on the ACP door, which has no such
// action, the sign-in starts at once and its link is posted in the session.

// NamedSecrets is a secret store by account name (providers/keys.Named): the MCP servers'
// OAuth tokens, by issuer and resource.
type NamedSecrets = mcpauth.Store

// documentShower is a client that can open a URL in the user's browser (LSP window/showDocument
// with external: true); served is false when it does not offer to.
type documentShower interface {
	ShowDocument(ctx context.Context, uri string) (served bool, err error)
}

// linkPoster is a client whose user signs in by a link in the session (the ACP door).
type linkPoster interface {
	SignInByLink() bool
}

// mcpSignInNeeded hears that server needs the user to sign in.
func (s *Session) mcpSignInNeeded(server string, err error) {
	if lp, ok := s.m.d.Client.(linkPoster); ok && lp.SignInByLink() {
		go func() {
			ctx, cancel := context.WithCancel(s.m.bgCtx)
			defer cancel()
			s.mu.Lock()
			set := s.mcp
			s.mu.Unlock()
			if set == nil {
				return
			}
			go func() {
				select {
				case <-set.Done():
					cancel()
				case <-ctx.Done():
				}
			}()
			if err := set.SignIn(ctx, server, s.postLink(server)); err != nil {
				s.notice(protocol.SeverityWarning, fmt.Sprintf("MCP server %s: sign-in failed", mcp.Clean(server, 64)), err.Error())
				return
			}
			s.notice(protocol.SeverityInfo, fmt.Sprintf("Signed in to MCP server %s", mcp.Clean(server, 64)), "Its tools join the next turn.")
		}()
		return
	}
	then := "; its tools are skipped until then."
	if ns := (*mcpauth.NeedsSignIn)(nil); errors.As(err, &ns) && ns.Scopes != nil {
		then = "; until then its calls that need it fail." // a step-up: the server is up, its token short for some calls
	}
	s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateNotice, Severity: protocol.SeverityWarning,
		NoticeTitle: fmt.Sprintf("MCP server %s needs you to sign in", mcp.Clean(server, 64)),
		Description: err.Error() + then,
		Meta:        protocol.Meta{protocol.MetaMCPSignIn: map[string]any{"server": server}}})
}

// postLink is the opener that posts the authorization URL in the session as a message.
func (s *Session) postLink(server string) mcp.Opener {
	return func(ctx context.Context, url string) error {
		text := fmt.Sprintf("MCP server %s needs you to sign in. Open this link to do so:\n\n%s\n", mcp.Clean(server, 64), url)
		s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, Content: &protocol.ContentBlock{Type: "text", Text: text}})
		return nil
	}
}

// opener asks the editor to open the URL in the browser, or, when it cannot, posts it.
func (s *Session) opener(server string) mcp.Opener {
	post := s.postLink(server)
	sd, ok := s.m.d.Client.(documentShower)
	if !ok {
		return post
	}
	return func(ctx context.Context, url string) error {
		served, err := sd.ShowDocument(ctx, url)
		if err != nil || !served {
			return post(ctx, url)
		}
		return nil
	}
}

// MCPSignIn is agent/mcp/signIn: it runs the sign-in of one of the session's servers, the
// browser opened by the editor, and answers once the server has its token (or the sign-in
// failed, saying why).
func (m *Manager) MCPSignIn(ctx context.Context, p protocol.MCPSignInParams) (protocol.MCPSignInResult, error) {
	set, err := m.mcpSet(p.SessionID, p.Server)
	if err != nil {
		return protocol.MCPSignInResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.MCPSignInResult{}, err
	}
	if err := set.SignIn(ctx, p.Server, s.opener(p.Server)); err != nil {
		return protocol.MCPSignInResult{}, err
	}
	return protocol.MCPSignInResult{Server: p.Server}, nil
}

// mcpSet is the MCP server set of session id, or a ParamError when it has none.
func (m *Manager) mcpSet(sessionID, server string) (*mcp.Set, error) {
	if err := checkRequired("sessionId", sessionID); err != nil {
		return nil, err
	}
	if err := checkRequired("server", server); err != nil {
		return nil, err
	}
	s, err := m.get(sessionID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	set := s.mcp
	s.mu.Unlock()
	if set == nil {
		return nil, &ParamError{Field: "server", Message: "this session has no MCP servers"}
	}
	return set, nil
}

// MCPCompleteSignIn is agent/x/mcp/completeSignIn: the address the user's browser ended on,
// pasted where the browser could not reach agentd's loopback callback, completes the server's
// sign-in under way (agent/mcp/signIn, still waiting); it answers once that sign-in ended. An
// address that is not its answer is refused, saying why, and the sign-in keeps waiting.
func (m *Manager) MCPCompleteSignIn(ctx context.Context, p protocol.MCPCompleteSignInParams) (protocol.MCPSignInResult, error) {
	if err := checkRequired("callbackUrl", p.CallbackURL); err != nil {
		return protocol.MCPSignInResult{}, err
	}
	set, err := m.mcpSet(p.SessionID, p.Server)
	if err != nil {
		return protocol.MCPSignInResult{}, err
	}
	if err := set.CompleteSignIn(ctx, p.Server, p.CallbackURL); err != nil {
		return protocol.MCPSignInResult{}, err
	}
	return protocol.MCPSignInResult{Server: p.Server}, nil
}

// MCPSignOut is agent/x/mcp/signOut: it forgets the server's tokens (`agentd mcp logout`) and
// starts it again, so that it says it needs sign-in.
func (m *Manager) MCPSignOut(ctx context.Context, p protocol.MCPSignOutParams) (protocol.MCPSignOutResult, error) {
	set, err := m.mcpSet(p.SessionID, p.Server)
	if err != nil {
		return protocol.MCPSignOutResult{}, err
	}
	had, err := set.SignOut(p.Server)
	if err != nil {
		return protocol.MCPSignOutResult{}, err
	}
	return protocol.MCPSignOutResult{Server: p.Server, HadTokens: had}, nil
}
