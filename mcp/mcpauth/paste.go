package mcpauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// A sign-in's callback normally reaches the loopback listener, on the machine agentd runs on.
// When the browser is on another machine (a remote editor: code-server, Remote SSH, a
// container), its redirect to 127.0.0.1 goes nowhere, and the user pastes the address the
// browser ended on instead (as Claude Code and Codex let one do). That address goes through the
// checks the listener makes: the state agentd sent, then (in signIn) the issuer. A pasted address
// that is not this sign-in's (no state, another state, the answer to another server's sign-in,
// another callback address, one already used) is refused and said, and the sign-in goes on
// waiting for the right one.

// maxPasted bounds a pasted address: a callback URL is well under it.
const maxPasted = 8 << 10

// pending is one sign-in waiting for its callback.
type pending struct {
	name, resource string
	state          string
	redirect       string // the redirect URI sent: where the callback is addressed
	deliver        func(callback) bool
}

// await files p as waiting for its callback on got: deliver hands the first callback over (from
// the listener or a paste) and reports whether it was the first; stop ends the wait. Once a
// callback is delivered, p is no longer waiting, so an address is used once.
func (f *Flow) await(p *pending, got chan callback) (deliver func(callback) bool, stop func()) {
	done := false
	p.deliver = func(c callback) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if done {
			return false
		}
		done = true
		delete(f.waiting, p.state)
		got <- c // cap 1, and only the first gets here
		return true
	}
	f.mu.Lock()
	if f.waiting == nil {
		f.waiting = map[string]*pending{}
	}
	f.waiting[p.state] = p
	f.mu.Unlock()
	return p.deliver, func() {
		f.mu.Lock()
		done = true
		if f.waiting[p.state] == p {
			delete(f.waiting, p.state)
		}
		f.mu.Unlock()
		// A paste delivered as the wait ended (its time-out, its cancel) hears so rather than
		// waiting for nothing.
		select {
		case c := <-got:
			c.answer(errors.New("the sign-in ended (it was given up or cancelled) before this answer was read: start it again"))
		default:
		}
	}
}

// Complete hands the address the user's browser ended on (the redirect to agentd's loopback
// callback, pasted) to this server's sign-in under way, and answers once that sign-in ended:
// nil when the server has its token, else why not. An address that is not this sign-in's answer
// is refused with the reason and the sign-in keeps waiting.
func (h *Handler) Complete(ctx context.Context, address string) error {
	address = strings.TrimSpace(address)
	if len(address) > maxPasted {
		return fmt.Errorf("MCP server %s: the address pasted is %d bytes long; a sign-in's answer is far shorter: refused", h.name, len(address))
	}
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("MCP server %s: that is not the address your browser ended on; paste the whole address from its address bar (it starts with http://127.0.0.1:)", h.name)
	}
	q := u.Query()
	state := q.Get("state")
	h.f.mu.Lock()
	p := h.f.waiting[state]
	mine := false
	for _, w := range h.f.waiting {
		if w.name == h.name && w.resource == h.resource {
			mine = true
		}
	}
	h.f.mu.Unlock()
	switch {
	case !mine && (p == nil || state == ""):
		return fmt.Errorf("MCP server %s: no sign-in of it is waiting for an answer (it ended, or that address was already used): start the sign-in again", h.name)
	case state == "":
		return fmt.Errorf("MCP server %s: the address carries no state, so it is not the answer to agentd's sign-in: refused (the sign-in is still waiting)", h.name)
	case p == nil:
		return fmt.Errorf("MCP server %s: the address carries a state agentd did not send for this sign-in (an older sign-in's address, or another page's): refused (the sign-in is still waiting)", h.name)
	case p.name != h.name || p.resource != h.resource:
		return fmt.Errorf("MCP server %s: that address is the answer to the sign-in of MCP server %s, not this one: refused", h.name, clean(p.name))
	}
	if want, _ := url.Parse(p.redirect); want == nil || originOf(u) != originOf(want) || u.Path != want.Path {
		return fmt.Errorf("MCP server %s: that address does not go to agentd's callback (%s): refused (the sign-in is still waiting)", h.name, p.redirect)
	}
	reply := make(chan error, 1)
	cb := readCallback(q)
	cb.reply = reply
	if !p.deliver(cb) {
		return fmt.Errorf("MCP server %s: the sign-in already had its answer (the browser reached agentd, or the address was pasted twice)", h.name)
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return errors.New("the wait for the sign-in's end was cancelled; the sign-in itself goes on")
	}
}
