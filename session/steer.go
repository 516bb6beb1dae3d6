package session

import (
	"context"

	"github.com/agentd-dev/agentd/protocol"
)

// Steering (contract section "Steering"): a user message added to the running turn at its next
// step boundary, after the current model call's tool calls have finished, without cancelling
// it. A prompt sent the normal way still queues behind the turn.

// SteerResult answers a steer: Accepted is false when no turn was running, and nothing was done.
type SteerResult struct {
	Accepted bool `json:"accepted"`
}

// Steer adds p.Prompt to the session's running turn. With no turn running (or one that is
// ending) it answers Accepted false and the client sends a normal prompt instead.
func (m *Manager) Steer(ctx context.Context, p protocol.PromptParams) (SteerResult, error) {
	if err := checkPrompt(&p); err != nil {
		return SteerResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return SteerResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running || s.ending || s.closed {
		return SteerResult{}, nil
	}
	s.steers = append(s.steers, p.Prompt)
	return SteerResult{Accepted: true}, nil
}

// takeSteers returns, and forgets, the steering messages that arrived since the last boundary.
func (s *Session) takeSteers() [][]protocol.ContentBlock {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.steers
	s.steers = nil
	return out
}

// steer is a step boundary: each steering message that arrived becomes a user message in the
// history, shown to the client and kept in the transcript like a prompt's. It reports whether
// there was one, so a turn the model meant to end goes on to answer it.
func (t *turn) steer() bool {
	msgs := t.s.takeSteers()
	for _, blocks := range msgs {
		t.addUserMessage(blocks, true)
	}
	if len(msgs) > 0 {
		t.s.m.trace.event(t.s.id, "steer", map[string]any{"messages": len(msgs)})
	}
	return len(msgs) > 0
}

// steerOrEnd is the boundary after which the turn ends unless a steering message is waiting:
// under one lock it either takes the waiting messages (and the turn goes on to answer them) or
// marks the session ending, so a steer that comes later is refused (Accepted false: the client
// sends it as a prompt) rather than accepted and then dropped with the turn.
func (t *turn) steerOrEnd() bool {
	s := t.s
	s.mu.Lock()
	if len(s.steers) == 0 {
		s.ending = true
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	return t.steer()
}
