package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/agentd-dev/agentd/protocol"
)

// Grants answers agent/x/grants/list: the remembered answers that decide this session's calls, its
// own first, then its project's persisted ones.
func (m *Manager) Grants(ctx context.Context, p protocol.SessionIDParams) (protocol.GrantsListResult, error) {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return protocol.GrantsListResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.GrantsListResult{}, err
	}
	res := protocol.GrantsListResult{Grants: []protocol.GrantInfo{}}
	for _, g := range s.allGrants() {
		res.Grants = append(res.Grants, protocol.GrantInfo{
			GrantID: grantID(g), Scope: string(g.Scope), Allow: g.Allow, Tool: g.Tool, Label: g.Label(),
			Command: g.Command, Env: g.Env, Stdin: g.Stdin, Pattern: g.Pattern, Host: g.Host, Sandboxed: g.Sandboxed,
		})
	}
	return res, nil
}

// RevokeGrant answers agent/x/grants/revoke: it forgets one grant of the list, the project's on
// disk too. Revoking only ever narrows what runs unasked, so any client may do it; a grant that is
// gone already is not an error (two clients may revoke the same one).
func (m *Manager) RevokeGrant(ctx context.Context, p protocol.GrantRevokeParams) (protocol.GrantRevokeResult, error) {
	if err := Validate(&p); err != nil {
		return protocol.GrantRevokeResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.GrantRevokeResult{}, err
	}
	is := func(g grant) bool { return grantID(g) == p.GrantID }
	s.mu.Lock()
	n := len(s.grants)
	s.grants = slices.DeleteFunc(s.grants, is)
	revoked := len(s.grants) < n
	s.mu.Unlock()
	if !revoked {
		revoked = m.projects.removeGrants(s.roots.Cwd(), is)
	}
	if revoked {
		m.trace.event(s.id, "grant_revoked", map[string]any{"grantId": p.GrantID})
	}
	return protocol.GrantRevokeResult{Revoked: revoked}, nil
}

// grantID names a grant by what it is, so the id a client listed still names it after other
// grants come and go, and two equal grants (which remember never stores) could not be told apart.
func grantID(g grant) string {
	b, _ := json.Marshal(g) // a struct of strings, bools and a map: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}
