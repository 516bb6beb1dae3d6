package workspace

import (
	"context"
	"time"
)

// Program is one program to run in the client's terminal (ACP's terminal/*).
type Program struct {
	Argv []string
	Dir  string
	// Env is set on top of the client's environment; an empty value hides a variable.
	Env       map[string]string
	MaxOutput int
}

// ProgramResult is how a program run in a terminal ended. ExitCode is -1 when it was ended by a
// signal (Signal names it) or did not end.
type ProgramResult struct {
	ExitCode  int
	Signal    string
	Output    string
	Truncated bool
	Duration  time.Duration
}

// Terminal is implemented by a port whose client runs programs in its own terminals (an ACP
// client that offers `terminal`). RunProgram returns ErrUnsupported when this client has none, and
// the caller runs the program itself. When ctx ends the program is killed and what it printed so
// far is returned with ctx's error.
type Terminal interface {
	RunProgram(ctx context.Context, p Program) (ProgramResult, error)
}
