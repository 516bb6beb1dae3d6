package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
)

// method is one entry of the method table.
type method struct {
	call func(s *Server, ctx context.Context, params json.RawMessage) (any, error)
	// inline methods run on the read goroutine, so nothing after them starts before they
	// answer (initialize, shutdown).
	inline bool
}

// handler adapts a typed handler: it decodes the params (absent or null params decode as {}),
// names the field of a type mismatch, runs validate, and calls f.
func handler[P any, R any](validate func(*P) error, f func(s *Server, ctx context.Context, p *P) (R, error)) method {
	return method{call: func(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		if validate != nil {
			if err := validate(&p); err != nil {
				return nil, err
			}
		}
		return f(s, ctx, &p)
	}}
}

// decodeParams decodes params strictly enough to name what is wrong with them.
func decodeParams(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return paramError("params", "must be an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		var ke *config.KeyError
		if errors.As(config.DecodeError(raw, err), &ke) {
			return paramError(ke.Key, ke.Msg)
		}
		return paramError("params", err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return paramError("params", "trailing data after the object")
	}
	return nil
}

// table is the method table: one line per method, grouped by file.
func (s *Server) table() map[string]method {
	return map[string]method{
		// lifecycle.go
		"initialize": {call: (*Server).initialize, inline: true},
		"shutdown":   {call: (*Server).shutdown, inline: true},

		// session.go, prompt.go: session validates its own requests (session/validate.go), for
		// this table and agentd exec alike.
		protocol.MethodSessionNew:             handler(nil, viaManager(Sessions.New)),
		protocol.MethodSessionLoad:            handler(nil, viaManager(Sessions.Load)),
		protocol.MethodSessionResume:          handler(nil, viaManager(Sessions.Resume)),
		protocol.MethodSessionFork:            handler(nil, viaManager(Sessions.Fork)),
		protocol.MethodCheckpointsList:        handler(nil, viaManager(Sessions.Checkpoints)),
		protocol.MethodCheckpointsRestore:     handler(nil, viaManager(Sessions.RestoreCheckpoint)),
		protocol.MethodProgramsList:           handler(nil, viaManager(Sessions.Programs)),
		protocol.MethodProgramStop:            handler(nil, viaManager(Sessions.StopProgram)),
		protocol.MethodSessionList:            handler(nil, viaManager(listSessions)),
		protocol.MethodSessionClose:           handler(nil, viaManager(closeSession)),
		protocol.MethodSessionDelete:          handler(nil, viaManager(deleteSession)),
		protocol.MethodSessionSetConfigOption: handler(nil, viaManager(Sessions.SetConfigOption)),
		protocol.MethodGrantsList:             handler(nil, viaManager(Sessions.Grants)),
		protocol.MethodGrantsRevoke:           handler(nil, viaManager(Sessions.RevokeGrant)),
		protocol.MethodMCPSignIn:              handler(nil, viaManager(mcpSignIn)),
		protocol.MethodMCPCompleteSignIn:      handler(nil, viaManager(mcpCompleteSignIn)),
		protocol.MethodMCPSignOut:             handler(nil, viaManager(mcpSignOut)),

		protocol.MethodSessionPrompt: handler(nil, viaManager(prompt)),
		MethodSessionSteer:           handler(nil, (*Server).steer),

		// providers.go
		protocol.MethodProvidersList: handler(nil, (*Server).providersList),
		protocol.MethodProvidersSet:  handler(nil, (*Server).providersSet),
		protocol.MethodProvidersTest: handler(validateProviderID, (*Server).providersTest),

		// completion.go
		MethodInlineCompletion: handler(validateInlineCompletion, (*Server).inlineCompletion),

		// mcp_servers.go
		protocol.MethodMCPServers: handler(nil, (*Server).mcpServers),

		// infer.go
		MethodInfer:      handler(validateInfer, (*Server).infer),
		MethodTranscribe: handler(validateTranscribe, (*Server).transcribe),
	}
}

// notifications are handled inline, in arrival order; they must stay quick.
func (s *Server) notificationTable() map[string]func(ctx context.Context, params json.RawMessage) error {
	return map[string]func(context.Context, json.RawMessage) error{
		"initialized":                      func(context.Context, json.RawMessage) error { return nil },
		protocol.MethodSessionCancel:       s.sessionCancel,
		"workspace/didChangeConfiguration": s.didChangeConfiguration,
		MethodDidClose:                     s.didClose,
	}
}
