package session

import (
	"context"

	"github.com/agentd-dev/agentd/workspace"
)

// RunProgram passes the client's terminals (workspace.Terminal, the ACP door's terminal/*)
// through the recording wrapper: a program's effects are not file changes it records.
func (w recordingWS) RunProgram(ctx context.Context, p workspace.Program) (workspace.ProgramResult, error) {
	if t, ok := w.Workspace.(workspace.Terminal); ok {
		return t.RunProgram(ctx, p)
	}
	return workspace.ProgramResult{}, workspace.ErrUnsupported
}
