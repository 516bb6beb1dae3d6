package protocol

// The remembered permission answers a user can see and take back (issue 33 item 4).
const (
	MethodGrantsList   = "agent/x/grants/list"
	MethodGrantsRevoke = "agent/x/grants/revoke"
)

// GrantsListResult answers agent/x/grants/list: the session's own grants, then the project's
// persisted ones, in the order they were given.
type GrantsListResult struct {
	Grants []GrantInfo `json:"grants"`
}

// GrantInfo is one remembered answer as a client lists it. Label is the sentence to show ("Always
// allow `git status` in this project"); the other fields say exactly what it covers. GrantID stays
// the same while the grant exists, so a client can revoke what it listed.
type GrantInfo struct {
	GrantID   string            `json:"grantId"`
	Scope     string            `json:"scope"` // "session" or "project"
	Allow     bool              `json:"allow"`
	Tool      string            `json:"tool"`
	Label     string            `json:"label"`
	Command   []string          `json:"command,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Stdin     string            `json:"stdin,omitempty"`
	Pattern   string            `json:"pattern,omitempty"`
	Host      string            `json:"host,omitempty"`
	Sandboxed bool              `json:"sandboxed,omitempty"`
}

// GrantRevokeParams names one grant of agent/x/grants/list.
type GrantRevokeParams struct {
	SessionID string `json:"sessionId"`
	GrantID   string `json:"grantId"`
}

// GrantRevokeResult says whether the grant was there to revoke.
type GrantRevokeResult struct {
	Revoked bool `json:"revoked"`
}
