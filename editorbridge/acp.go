package editorbridge

// The ACP door's side of the port: edits become whole-file fs/write_text_file requests when the
// client offers them (else disk writes inside the roots), and programs run in the client's
// terminals (terminal/create … terminal/release) when it offers them.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/agentd-dev/agentd/workspace"
)

// Reverse requests of the ACP door, by the names the LSP door's table would use: the ACP codec
// strips the agent/ prefix on the wire.
const (
	methodWriteTextFile       = "agent/fs/write_text_file"
	methodTerminalCreate      = "agent/terminal/create"
	methodTerminalOutput      = "agent/terminal/output"
	methodTerminalWaitForExit = "agent/terminal/wait_for_exit"
	methodTerminalKill        = "agent/terminal/kill"
	methodTerminalRelease     = "agent/terminal/release"
)

var _ workspace.Terminal = (*editorWorkspace)(nil)

type writeTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
}

// acpApplyEdit applies changes on the ACP door. Text of files goes through fs/write_text_file
// when the client offers it, after checking that the file still holds the text the edit was
// computed from; directories, renames and deletions, which ACP cannot express, and everything
// for a client without writeTextFile, go to the disk (atomically, containment checked again).
func (w *editorWorkspace) acpApplyEdit(ctx context.Context, label string, changes []workspace.Change) error {
	if !w.b.caps.WriteTextFile {
		return w.disk.ApplyEdit(ctx, label, changes)
	}
	for i, c := range changes {
		write := (c.Kind == workspace.ChangeEdit) || (c.Kind == workspace.ChangeCreate && !c.Dir)
		if !write {
			if err := w.disk.ApplyEdit(ctx, label, []workspace.Change{c}); err != nil {
				return err
			}
			continue
		}
		// An edit is checked against what the client shows (OldText was read the same way); a
		// create asks the disk whether the file exists, which a client's read cannot say.
		var cur workspace.Doc
		var err error
		if c.Kind == workspace.ChangeEdit {
			cur, err = w.ReadFile(ctx, c.Path)
		} else {
			cur, err = w.disk.ReadFile(ctx, c.Path)
		}
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		switch {
		case c.Kind == workspace.ChangeEdit && !exists:
			return &workspace.NotAppliedError{Reason: c.Path + " no longer exists"}
		case c.Kind == workspace.ChangeEdit && cur.Text != c.OldText:
			return &workspace.NotAppliedError{Reason: c.Path + " changed since it was read; read it again and redo the edit"}
		case c.Kind == workspace.ChangeCreate && exists && c.IgnoreIfExists && !c.Overwrite:
			continue
		case c.Kind == workspace.ChangeCreate && exists && !c.Overwrite:
			return &workspace.NotAppliedError{Reason: c.Path + " already exists"}
		}
		p := writeTextFileParams{SessionID: w.sessionID, Path: c.Path, Content: c.NewText}
		if err := w.b.conn.Call(ctx, methodWriteTextFile, p, nil); err != nil {
			if i > 0 {
				return fmt.Errorf("%s: writing %s through the editor (the changes before it were made): %w", label, c.Path, err)
			}
			return fmt.Errorf("writing %s through the editor: %w", c.Path, err)
		}
	}
	return nil
}

type envVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type terminalCreateParams struct {
	SessionID       string        `json:"sessionId"`
	Command         string        `json:"command"`
	Args            []string      `json:"args"`
	Env             []envVariable `json:"env"`
	Cwd             string        `json:"cwd,omitempty"`
	OutputByteLimit int           `json:"outputByteLimit,omitempty"`
}

type terminalIDParams struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

type terminalExitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

type terminalOutputResult struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *terminalExitStatus `json:"exitStatus"`
}

// RunProgram runs p in a terminal of the client (ACP's terminal/*): create, wait for the exit
// (killing it when ctx ends), read the output, release. Without the capability it returns
// workspace.ErrUnsupported.
func (w *editorWorkspace) RunProgram(ctx context.Context, p workspace.Program) (workspace.ProgramResult, error) {
	if !w.b.caps.ACP || !w.b.caps.Terminal || len(p.Argv) == 0 {
		return workspace.ProgramResult{}, workspace.ErrUnsupported
	}
	names := make([]string, 0, len(p.Env))
	for k := range p.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	cp := terminalCreateParams{SessionID: w.sessionID, Command: p.Argv[0], Args: append([]string{}, p.Argv[1:]...), Env: []envVariable{}, Cwd: p.Dir, OutputByteLimit: p.MaxOutput}
	for _, k := range names {
		cp.Env = append(cp.Env, envVariable{Name: k, Value: p.Env[k]})
	}
	start := time.Now()
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	if err := w.b.conn.Call(ctx, methodTerminalCreate, cp, &created); err != nil {
		return workspace.ProgramResult{ExitCode: -1}, fmt.Errorf("starting the program in the editor's terminal: %w", err)
	}
	id := terminalIDParams{SessionID: w.sessionID, TerminalID: created.TerminalID}
	// What follows the wait must happen even once ctx has ended: killing, reading, releasing.
	after := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	}
	res := workspace.ProgramResult{ExitCode: -1}
	var exit terminalExitStatus
	waitErr := w.b.conn.Call(ctx, methodTerminalWaitForExit, id, &exit)
	if waitErr != nil {
		kctx, cancel := after()
		if err := w.b.conn.Call(kctx, methodTerminalKill, id, nil); err != nil {
			w.b.log.Debug("terminal/kill failed")
		}
		cancel()
	}
	octx, cancel := after()
	var out terminalOutputResult
	oerr := w.b.conn.Call(octx, methodTerminalOutput, id, &out)
	_ = w.b.conn.Call(octx, methodTerminalRelease, id, nil)
	cancel()
	res.Duration = time.Since(start)
	res.Output, res.Truncated = out.Output, out.Truncated
	if waitErr == nil {
		if exit.ExitCode != nil {
			res.ExitCode = *exit.ExitCode
		}
		if exit.Signal != nil {
			res.Signal = *exit.Signal
		}
	}
	switch {
	case waitErr != nil && ctx.Err() != nil:
		return res, ctx.Err()
	case waitErr != nil:
		return res, fmt.Errorf("waiting for the program in the editor's terminal: %w", waitErr)
	case oerr != nil:
		return res, fmt.Errorf("reading the program's output from the editor's terminal: %w", oerr)
	}
	return res, nil
}
