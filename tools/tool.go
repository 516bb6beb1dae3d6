// Package tools owns the model-facing toolset: the Tool interface, the registry, schemas
// generated from each tool's typed input struct, and each tool's effect class (read, write,
// exec), which is all the permission policy and the clients need to know about a tool.
//
// A tool changes the project only through the workspace port it is handed in Env (edits carry
// the buffer version they were computed against; creations, moves and deletions are workspace
// edits too), and reads through it whatever the editor may hold differently from the disk: a
// file's text (the open buffer, unsaved changes included), diagnostics, symbols. Three things go
// around the port, on paths Env.Roots has already resolved inside the roots, because the editor
// has no say in them:
//   - metadata and directory structure (os.Stat, Lstat, ReadDir, Readlink): list_dir, the checks
//     of create_dir, move_path, delete_path, run_program and add_dependency, the walks of search
//     (walk.go);
//   - bulk reads that scan many files (search.go through workspace.ReadInto, walk.go,
//     find_symbol's scanner, project_overview's manifests): the port answers one file per
//     reverse request, which a search of thousands of files cannot afford; search_text overlays
//     the editor's dirty buffers from the port, so what it finds is what the user sees;
//   - programs (run_program, add_dependency, project_overview's git, find_symbol's ctags), run
//     with os/exec in a root, with os.Environ less the provider keys (exec.go).
//
// No tool writes to the file system itself.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentd-dev/agentd/tools/web"
	"github.com/agentd-dev/agentd/workspace"
)

// Effect is what a tool may do to the project. The policy asks before Write, Exec and Fetch.
type Effect int

const (
	EffectRead Effect = iota + 1
	EffectWrite
	EffectExec
	// EffectFetch reaches the network on the model's behalf (web_fetch, web_search): it changes
	// nothing in the project, but a URL or a query the model wrote can carry the project's data
	// to any host, so it asks like a write, in plan mode too.
	EffectFetch
)

func (e Effect) String() string {
	switch e {
	case EffectRead:
		return "read"
	case EffectWrite:
		return "write"
	case EffectExec:
		return "exec"
	case EffectFetch:
		return "fetch"
	}
	return "unknown"
}

// Tool is one model-facing tool. Kind is the ACP tool kind clients show (read, edit, delete,
// move, search, execute, ...).
type Tool interface {
	Name() string
	// Description is what the model reads about a tool that brings its own text (an MCP
	// server's); a built-in tool returns "" and is described by the prompt config.
	Description() string
	Schema() json.RawMessage
	Effect() Effect
	Kind() string
	// Title is a short human title for a call, such as "Read main.go"; args may be partial or
	// invalid while they stream.
	Title(args json.RawMessage) string
	// Run executes one call. Bad arguments, a denial and a failed edit are an error Result the
	// model reads; Run never panics on input (the engine recovers anyway).
	Run(ctx context.Context, env *Env, args json.RawMessage) Result
}

// Diff is a whole-file change, as ACP shows it: OldText nil for a new file. A deleted file has
// NewText "" (the contract's diff always has a newText) and Deleted set, which tells it apart
// from a file emptied by an edit.
type Diff struct {
	Path    string
	OldText *string
	NewText *string
	Deleted bool
}

// Location points the client at a file (and 1-based line) a call touches.
type Location struct {
	Path string
	Line int
}

// Result is what a call returns to the model and to the client.
type Result struct {
	// Output is the text the model reads.
	Output  string
	IsError bool
	// Images go to the model with the result (an MCP tool's screenshot, say); each dialect
	// places them where its API takes a tool result's images.
	Images []Image
	// Diffs are the file changes the call made, shown to the user.
	Diffs     []Diff
	Locations []Location
	// Raw is structured output for the client (rawOutput); optional.
	Raw any
}

// Image is a picture in a tool result: its MIME type (image/png, image/jpeg, image/gif or
// image/webp) and its bytes.
type Image struct {
	MimeType string
	Data     []byte
}

// Errorf is a convenience for an error result.
func Errorf(format string, args ...any) Result {
	return Result{Output: fmt.Sprintf(format, args...), IsError: true}
}

// PermissionRequest is what a mutating tool asks before it acts: the diffs of a file change, or
// the exact command and directory of a program.
type PermissionRequest struct {
	Title string
	Kind  string
	// Paths are the files or directories the call touches; grants are keyed by them.
	Paths []string
	// Host is the host a fetch sends the model's request to (lowercase, no port); a fetch's
	// grants are keyed by it, so allowing one site does not allow every site.
	Host    string
	Diffs   []Diff
	Command []string
	Cwd     string
	// Env and Stdin are the variables a program is started with on top of its usual
	// environment, and the input written to it. Both can make a program do something else
	// entirely (GIT_CONFIG_*, LD_PRELOAD, NODE_OPTIONS, GOFLAGS; `python3 -`), so both are shown
	// in the question and are part of the grant.
	Env   map[string]string
	Stdin string
	// Meta is added to the request's toolCall._meta (the engine's "agentd/saves").
	Meta map[string]any
	// Sandbox says how a program will run: "" (no sandbox setting) or one of SandboxApplied,
	// SandboxUnavailable, SandboxEscape; Justification is the model's reason for an escape.
	Sandbox       string
	Justification string
}

// ErrDenied is returned by Env.Permit when the user, a remembered rule or the mode refuses.
// Its message is what the model is told.
type ErrDenied struct{ Reason string }

func (e *ErrDenied) Error() string { return e.Reason }

// IsDenied reports whether err is a denial.
func IsDenied(err error) bool {
	var d *ErrDenied
	return errors.As(err, &d)
}

// Env is what a call is run with. The engine builds one per call.
type Env struct {
	// Roots contains every path a call names; relative paths resolve against Roots.Cwd().
	Roots *workspace.Roots
	WS    workspace.Workspace
	// Permit asks the policy (and, in ask mode, the user) whether the call may go ahead. Write
	// and exec tools call it once, after computing what they would do and before doing it.
	Permit func(ctx context.Context, req PermissionRequest) error
	// Progress streams partial output (run_program) to the client as tool_call_update content.
	Progress func(text string)
	// Settings the tools read.
	AllowShell bool
	// SaveBeforeExec, when set, is called by exec tools after the permission and before the
	// program starts: the engine asks the editor to save the buffers this session changed
	// (agent/x/save_buffers, setting saveBeforeRun) and returns a note for the model naming the
	// files it could not save, or "".
	SaveBeforeExec func(ctx context.Context) string
	// HideEnv names environment variables the exec tools remove from a program's environment:
	// every variable that may hold a provider key (the engine fills it from the providers
	// registry's KeyEnvNames, the one list of them). A program's output reaches the transcript
	// and the model, so `echo $ANTHROPIC_API_KEY` would hand the key to both.
	HideEnv []string
	// Fetcher is what web_fetch fetches through; nil means the default policy and limits
	// (tests inject one that lets their own server through).
	Fetcher *web.Fetcher
	// SearchWeb makes web_search's one request through the search-capable provider; nil when
	// none is configured.
	SearchWeb func(ctx context.Context, query string) (WebAnswer, error)
	// Semantic is the project's semantic index; nil when no embedding model is configured.
	Semantic SemanticIndex
	// Sandbox confines run_program's programs; nil when the sandbox setting is off.
	Sandbox *Sandbox
	// Programs are the session's background programs (run_program {background: true},
	// program_output, program_stop); nil where there are none (agentd exec's one turn).
	Programs *Programs
	// ToolCallID is the call's id, and ProgramEnded is told when a background program it
	// started ends (exited or stopped); either may be empty.
	ToolCallID   string
	ProgramEnded func(ProgramInfo)
	// DiagnosticsWait, when positive, makes the file-editing tools wait up to that long after an
	// edit for the editor's diagnostics of the file to settle, and append its errors to the
	// result, so the model sees what the edit broke. Zero skips it.
	DiagnosticsWait time.Duration
	// Skills are the skills the session's system prompt lists, which the skill tool loads.
	Skills []Skill
	// RunAgent runs a subagent (the agent tool) and returns its final answer as the call's
	// result; nil inside a subagent, which cannot start another.
	RunAgent func(ctx context.Context, req AgentRequest) Result
	// Elicit shows an MCP server's question to the user during the call; nil declines it.
	Elicit Elicit
}
