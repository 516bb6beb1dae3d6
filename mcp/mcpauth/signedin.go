package mcpauth

// SignedIn reports whether the server's connections hold a token of a sign-in (their own or
// one stored): what a client's "Sign out" is offered on. A sign-out ends it.
func (h *Handler) SignedIn() bool {
	h.mu.Lock()
	s := h.src
	h.mu.Unlock()
	return s != nil && s.live()
}
