package mcp

import (
	"context"
	"fmt"
)

// find is the set's server named name, or nil.
func (s *Set) find(name string) *server {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sv := range s.servers {
		if sv.cfg.Name == name {
			return sv
		}
	}
	return nil
}

// CompleteSignIn hands the address the user's browser ended on (pasted, when the browser could
// not reach agentd's loopback listener) to the sign-in of server name under way, and answers
// once that sign-in ended (mcpauth.Handler.Complete): an address that is not its answer is
// refused, saying why, and the sign-in keeps waiting.
func (s *Set) CompleteSignIn(ctx context.Context, name, address string) error {
	sv := s.find(name)
	if sv == nil {
		return fmt.Errorf("this session has no MCP server %q", Clean(name, maxLabel))
	}
	if sv.auth == nil {
		return signInRefusal(sv.cfg)
	}
	return sv.auth.Complete(ctx, address)
}

// SignOut forgets the tokens of server name (every session's connections to it lose them) and
// starts it again, so it says it needs sign-in. It reports whether there were any tokens.
func (s *Set) SignOut(name string) (bool, error) {
	sv := s.find(name)
	if sv == nil {
		return false, fmt.Errorf("this session has no MCP server %q", Clean(name, maxLabel))
	}
	if sv.auth == nil || s.pool.OAuth == nil {
		return false, signInRefusal(sv.cfg)
	}
	had, err := s.pool.OAuth.SignOut(sv.cfg.URL)
	if err != nil {
		return false, fmt.Errorf("MCP server %s: forgetting its tokens failed: %v", Clean(name, maxLabel), err)
	}
	sv.restart()
	s.mu.Lock()
	delete(s.reported, sv)
	s.mu.Unlock()
	return had, nil
}
