// Package workspace owns the port through which tools touch the project: the session's roots and
// the containment of every path a tool names, reads that see the editor's unsaved buffers, edits
// described as whole-text changes with the version they were computed against, and the
// conversion between byte offsets and LSP positions in each position encoding. The editor bridge
// implements the port over reverse requests; Disk implements it on the file system for
// `agentd exec`.
package workspace

import (
	"context"
	"errors"
)

// Doc is a file's text as the editor (or the disk) has it now.
type Doc struct {
	Path string
	Text string
	// Version is the editor buffer's version; nil when the text came from disk.
	Version *int32
	// Dirty is true when the buffer has unsaved changes.
	Dirty bool
}

// Buffer is an open editor buffer whose text differs from the disk.
type Buffer struct {
	Path    string
	Version *int32
}

// Severity follows LSP: 1 error, 2 warning, 3 information, 4 hint.
type Severity int

// Diagnostic is one problem the editor reports. Lines and columns are 1-based.
type Diagnostic struct {
	Line, Column       int
	EndLine, EndColumn int
	Severity           Severity
	Source             string
	Code               string
	Message            string
}

// FileDiagnostics groups the diagnostics of one file.
type FileDiagnostics struct {
	Path        string
	Diagnostics []Diagnostic
}

// Symbol is a named definition found by the editor's language servers or a scan. Line is 1-based.
type Symbol struct {
	Name      string
	Kind      string
	Container string
	Path      string
	Line      int
}

// ChangeKind discriminates a Change.
type ChangeKind int

const (
	// ChangeEdit replaces the text of an existing file. The bridge turns OldText → NewText into
	// minimal LSP text edits in the negotiated position encoding.
	ChangeEdit ChangeKind = iota + 1
	ChangeCreate
	ChangeRename
	ChangeDelete
)

// Change is one step of an edit. Changes of one ApplyEdit are applied atomically, in order.
type Change struct {
	Kind ChangeKind
	Path string
	// NewPath is the destination of a rename.
	NewPath string
	// Version is the buffer version OldText was read at; nil means no version check.
	Version *int32
	// OldText and NewText are the whole file before and after, for ChangeEdit. For ChangeCreate
	// NewText is the initial content (the bridge sends a CreateFile then an edit).
	OldText, NewText string
	// Overwrite and IgnoreIfExists qualify create and rename; Recursive qualifies delete.
	Overwrite, IgnoreIfExists, Recursive bool
	// Dir makes a ChangeCreate create a directory (and its parents) instead of a file; LSP has no
	// such operation, so the bridge creates it on disk after the editor's other changes succeed,
	// and Disk uses MkdirAll.
	Dir bool
}

// SaveResult reports which buffers the editor saved.
type SaveResult struct {
	Saved  []string
	Failed map[string]string
}

// Workspace is the port. Every path it is given is absolute and has already been contained by
// Roots.Resolve.
type Workspace interface {
	// ReadFile returns the open buffer's text (unsaved changes included) or the disk's.
	// A missing file is an error wrapping fs.ErrNotExist.
	ReadFile(ctx context.Context, path string) (Doc, error)
	DirtyBuffers(ctx context.Context) ([]Buffer, error)
	// Diagnostics of the given files, or of all files the editor knows when paths is empty.
	Diagnostics(ctx context.Context, paths []string) ([]FileDiagnostics, error)
	// WorkspaceSymbols asks the editor's language servers; ErrUnsupported when it cannot.
	WorkspaceSymbols(ctx context.Context, query string) ([]Symbol, error)
	// ApplyEdit applies all changes or none. A refusal is a *NotAppliedError.
	ApplyEdit(ctx context.Context, label string, changes []Change) error
	// SaveBuffers asks the editor to write those buffers to disk; ErrUnsupported when it cannot.
	SaveBuffers(ctx context.Context, paths []string) (SaveResult, error)
}

// ErrUnsupported means the client lacks the capability behind a call.
var ErrUnsupported = errors.New("not supported by this editor")

// NotAppliedError is the editor's refusal of an edit (applied:false): a stale version, the user
// said no, a file that exists.
type NotAppliedError struct {
	Reason string
}

func (e *NotAppliedError) Error() string {
	if e.Reason == "" {
		return "the editor did not apply the edit"
	}
	return "the editor did not apply the edit: " + e.Reason
}
