// Package session owns the agent loop: sessions and their turns, the history and its compaction,
// the queue of prompts, the streaming of every provider event to the client as session updates,
// the running of tool calls under the permission policy, cancellation, and the persistence of
// transcripts so sessions outlive the daemon. It knows the editor only through the Client and
// workspace.Workspace interfaces declared here and in workspace.
package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/workspace"
)

// Client is the editor as the engine sees it. The editor bridge implements it over the
// connection; tests use the fake editor through the same bridge.
type Client interface {
	// Update sends one agent/session/update notification. Updates of one session are delivered
	// in the order they are sent.
	Update(sessionID string, u protocol.SessionUpdate)
	// RequestPermission asks the user. The context ends the request ($/cancelRequest).
	RequestPermission(ctx context.Context, p protocol.RequestPermissionParams) (protocol.RequestPermissionResult, error)
	// CanAskPermission reports whether the client answers permission requests (permissions.ui).
	CanAskPermission() bool
}

// WorkspaceFactory makes the workspace port of one session.
type WorkspaceFactory func(sessionID string, roots *workspace.Roots) workspace.Workspace

// ProviderSource resolves the configured provider (settings, key lookup bound to its origin)
// into a ready provider. id "" means the default provider of the settings.
type ProviderSource interface {
	Provider(ctx context.Context, id string) (providers.Provider, providers.Config, error)
}

// ErrUnknownSession is returned for a session id the manager does not know (-32002 on the wire).
var ErrUnknownSession = errors.New("unknown session")

// ErrBusy refuses what cannot happen while the session's turn runs (a checkpoint restore).
var ErrBusy = errors.New("a turn is running in this session; cancel it or wait for it to end")

// ParamError is an invalid parameter (-32602 on the wire); Field names it.
type ParamError struct {
	Field   string
	Message string
}

func (e *ParamError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Message) }
