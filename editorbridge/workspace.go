package editorbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// editorWorkspace is the port of one session over the editor.
type editorWorkspace struct {
	b         *Bridge
	sessionID string
	roots     *workspace.Roots
	disk      *workspace.Disk // the fallback for what the editor does not serve, confined to roots
}

var _ workspace.Workspace = (*editorWorkspace)(nil)

func isCode(err error, code int) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Code == code
}

// ReadFile reads through the editor (the open buffer, unsaved changes included); without
// fs.readTextFile it reads the disk and says so once.
func (w *editorWorkspace) ReadFile(ctx context.Context, path string) (workspace.Doc, error) {
	var res protocol.ReadTextFileResult
	served, err := w.b.callOptional(ctx, w.b.caps.Agent.FS.ReadTextFile, protocol.MethodReadTextFile,
		protocol.ReadTextFileParams{SessionID: w.sessionID, Path: path}, &res)
	switch {
	case isCode(err, protocol.CodeServerNotInit):
		return workspace.Doc{}, fmt.Errorf("%s: %w (%v)", path, fs.ErrNotExist, err)
	case err != nil:
		return workspace.Doc{}, fmt.Errorf("reading %s through the editor: %w", path, err)
	case !served:
		return w.diskRead(ctx, path)
	}
	doc := workspace.Doc{Path: path, Text: res.Content}
	if v, ok := metaInt(res.Meta, "agentd/version"); ok {
		doc.Version = &v
	}
	if d, ok := res.Meta["agentd/dirty"].(bool); ok {
		doc.Dirty = d
	}
	return doc, nil
}

func metaInt(m protocol.Meta, key string) (int32, bool) {
	switch v := m[key].(type) {
	case float64:
		if v == float64(int32(v)) {
			return int32(v), true
		}
	case json.Number:
		n, err := strconv.ParseInt(string(v), 10, 32)
		return int32(n), err == nil
	case int:
		return int32(v), true
	case int32:
		return v, true
	case int64:
		return int32(v), true
	}
	return 0, false
}

func (w *editorWorkspace) diskRead(ctx context.Context, path string) (workspace.Doc, error) {
	w.b.noticeOnce(w.sessionID, "read", "Reading files from disk",
		"This editor does not share its open files with agentd, so agentd reads them from disk and does not see unsaved changes.")
	return w.disk.ReadFile(ctx, path)
}

// DirtyBuffers lists the editor's unsaved buffers; none are known without the capability.
func (w *editorWorkspace) DirtyBuffers(ctx context.Context) ([]workspace.Buffer, error) {
	var res protocol.DirtyBuffersResult
	served, err := w.b.callOptional(ctx, w.b.caps.Agent.DirtyBuffers, protocol.MethodDirtyBuffers,
		protocol.DirtyBuffersParams{SessionID: w.sessionID}, &res)
	if err != nil {
		return nil, fmt.Errorf("asking the editor for unsaved buffers: %w", err)
	}
	if !served {
		return nil, nil
	}
	out := make([]workspace.Buffer, 0, len(res.Buffers))
	for _, b := range res.Buffers {
		out = append(out, workspace.Buffer{Path: b.Path, Version: b.Version})
	}
	return out, nil
}

// Diagnostics asks the editor. Lines and columns become 1-based; a column counts units of the
// negotiated position encoding (characters, for the text agentd usually sees).
func (w *editorWorkspace) Diagnostics(ctx context.Context, paths []string) ([]workspace.FileDiagnostics, error) {
	var res protocol.DiagnosticsResult
	served, err := w.b.callOptional(ctx, w.b.caps.Agent.Diagnostics, protocol.MethodDiagnostics,
		protocol.DiagnosticsParams{SessionID: w.sessionID, Paths: paths}, &res)
	if err != nil {
		return nil, fmt.Errorf("asking the editor for diagnostics: %w", err)
	}
	if !served {
		w.b.noticeOnceSeverity(w.sessionID, "diagnostics", protocol.SeverityInfo, "No diagnostics from the editor",
			"This editor does not share its diagnostics with agentd, so agentd cannot see its language servers' problems.")
		return nil, workspace.ErrUnsupported
	}
	out := make([]workspace.FileDiagnostics, 0, len(res.Items))
	for _, item := range res.Items {
		fd := workspace.FileDiagnostics{Path: item.Path}
		for _, raw := range item.Diagnostics {
			var d Diagnostic
			if err := json.Unmarshal(raw, &d); err != nil {
				return nil, fmt.Errorf("the editor sent a malformed diagnostic for %s: %w", item.Path, err)
			}
			fd.Diagnostics = append(fd.Diagnostics, workspace.Diagnostic{
				Line: d.Range.Start.Line + 1, Column: d.Range.Start.Character + 1,
				EndLine: d.Range.End.Line + 1, EndColumn: d.Range.End.Character + 1,
				Severity: workspace.Severity(d.Severity), Source: d.Source, Code: codeString(d.Code), Message: d.Message,
			})
		}
		out = append(out, fd)
	}
	return out, nil
}

func codeString(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// WorkspaceSymbols asks the editor's language servers.
func (w *editorWorkspace) WorkspaceSymbols(ctx context.Context, query string) ([]workspace.Symbol, error) {
	var res protocol.WorkspaceSymbolsResult
	served, err := w.b.callOptional(ctx, w.b.caps.Agent.WorkspaceSymbols, protocol.MethodWorkspaceSymbols,
		protocol.WorkspaceSymbolsParams{SessionID: w.sessionID, Query: query}, &res)
	if err != nil {
		return nil, fmt.Errorf("asking the editor for symbols: %w", err)
	}
	if !served {
		return nil, workspace.ErrUnsupported
	}
	out := make([]workspace.Symbol, 0, len(res.Symbols))
	for _, raw := range res.Symbols {
		var s WorkspaceSymbol
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("the editor sent a malformed symbol: %w", err)
		}
		p, err := URIPath(s.Location.URI)
		if err != nil {
			continue // a symbol in a non-file document (a virtual buffer) is of no use to tools
		}
		sym := workspace.Symbol{Name: s.Name, Kind: SymbolKindName(s.Kind), Container: s.ContainerName, Path: p}
		if s.Location.Range != nil {
			sym.Line = s.Location.Range.Start.Line + 1
		}
		out = append(out, sym)
	}
	return out, nil
}

// SaveBuffers asks the editor to save; without the capability it says once that programs will
// see the disk, not the buffers.
func (w *editorWorkspace) SaveBuffers(ctx context.Context, paths []string) (workspace.SaveResult, error) {
	var res protocol.SaveBuffersResult
	served, err := w.b.callOptional(ctx, w.b.caps.Agent.SaveBuffers, protocol.MethodSaveBuffers,
		protocol.SaveBuffersParams{SessionID: w.sessionID, Paths: paths}, &res)
	if err != nil {
		return workspace.SaveResult{}, fmt.Errorf("asking the editor to save: %w", err)
	}
	if !served {
		w.b.noticeOnce(w.sessionID, "save", "Unsaved edits are not saved before programs run",
			"This editor does not serve agent/x/save_buffers; programs agentd runs read the files on disk, without the edits still unsaved in the editor.")
		return workspace.SaveResult{}, workspace.ErrUnsupported
	}
	out := workspace.SaveResult{Saved: res.Saved}
	if len(res.Failed) > 0 {
		out.Failed = map[string]string{}
		for _, f := range res.Failed {
			out.Failed[f.Path] = f.Reason
		}
	}
	return out, nil
}

// ApplyEdit sends the changes as one workspace/applyEdit; applied:false becomes a
// *workspace.NotAppliedError with the editor's reason. A client without applyEdit gets the
// changes written to disk (atomically, checked against OldText) and a notice.
func (w *editorWorkspace) ApplyEdit(ctx context.Context, label string, changes []workspace.Change) error {
	if w.b.caps.ACP {
		return w.acpApplyEdit(ctx, label, changes)
	}
	if !w.b.caps.ApplyEdit {
		w.b.noticeOnce(w.sessionID, "edit", "Edits written to disk",
			"This editor does not accept workspace/applyEdit, so agentd writes its edits to the files on disk directly.")
		return w.disk.ApplyEdit(ctx, label, changes)
	}
	// Directories have no LSP operation: they are made on disk once the editor took the rest.
	var dirs []workspace.Change
	var rest []workspace.Change
	for _, c := range changes {
		switch {
		case c.Kind == workspace.ChangeCreate && c.Dir:
			dirs = append(dirs, c)
		case c.Kind == workspace.ChangeCreate && c.IgnoreIfExists && !c.Overwrite && c.NewText != "":
			// The editor would skip the CreateFile but still apply the content edit that
			// follows it, prepending NewText to the existing file; decide here instead.
			if _, err := w.ReadFile(ctx, c.Path); err == nil {
				continue
			} else if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			rest = append(rest, c)
		default:
			rest = append(rest, c)
		}
	}
	if len(rest) > 0 {
		edit, origin, err := w.b.workspaceEdit(rest)
		if err != nil {
			return err
		}
		if edit != nil {
			var res ApplyWorkspaceEditResult
			if err := w.b.conn.Call(ctx, protocol.MethodApplyEdit, ApplyWorkspaceEditParams{Label: label, Edit: *edit}, &res); err != nil {
				return fmt.Errorf("sending the edit to the editor: %w", err)
			}
			if !res.Applied {
				reason := res.FailureReason
				if res.FailedChange != nil && int(*res.FailedChange) < len(origin) {
					what := describe(rest[origin[*res.FailedChange]])
					if reason == "" {
						reason = "refused " + what
					} else {
						reason += " (" + what + ")"
					}
				}
				return &workspace.NotAppliedError{Reason: reason}
			}
		}
	}
	if len(dirs) > 0 {
		if err := w.disk.ApplyEdit(ctx, label, dirs); err != nil {
			return err
		}
	}
	return nil
}

// workspaceEdit translates changes into an LSP WorkspaceEdit the client can take: documentChanges
// with versioned edits and resource operations, or plain changes for a client without
// documentChanges (text edits only). It returns nil when there is nothing to send; origin maps
// each document change back to the index of the Change it came from.
func (b *Bridge) workspaceEdit(changes []workspace.Change) (edit *WorkspaceEdit, origin []int, err error) {
	edit, origin, err = b.buildEdit(changes)
	if err != nil || edit == nil || (len(edit.Changes) == 0 && len(edit.DocumentChanges) == 0) {
		return nil, nil, err
	}
	return edit, origin, nil
}

func (b *Bridge) buildEdit(changes []workspace.Change) (*WorkspaceEdit, []int, error) {
	enc := b.caps.encoding()
	if !b.caps.DocumentChanges {
		edit := &WorkspaceEdit{Changes: map[string][]TextEdit{}}
		for _, c := range changes {
			if c.Kind != workspace.ChangeEdit {
				return nil, nil, fmt.Errorf("this editor cannot create, rename or delete files through workspace/applyEdit (no documentChanges support)")
			}
			uri := FileURI(c.Path)
			if _, dup := edit.Changes[uri]; dup {
				return nil, nil, fmt.Errorf("%s is edited twice in one change set, which this editor cannot take", c.Path)
			}
			tes, err := TextEdits(c.OldText, c.NewText, enc)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.Path, err)
			}
			if len(tes) > 0 {
				edit.Changes[uri] = tes
			}
		}
		return edit, nil, nil
	}
	edit := &WorkspaceEdit{}
	var origin []int
	add := func(i int, dc any) {
		edit.DocumentChanges = append(edit.DocumentChanges, dc)
		origin = append(origin, i)
	}
	need := func(op string) error {
		if b.caps.resourceOp(op) {
			return nil
		}
		return fmt.Errorf("this editor cannot %s files through workspace/applyEdit (resourceOperations lacks %q)", op, op)
	}
	for i, c := range changes {
		uri := FileURI(c.Path)
		switch c.Kind {
		case workspace.ChangeEdit:
			tes, err := TextEdits(c.OldText, c.NewText, enc)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.Path, err)
			}
			if len(tes) == 0 {
				continue
			}
			add(i, &TextDocumentEdit{
				TextDocument: OptionalVersionedTextDocumentIdentifier{URI: uri, Version: c.Version},
				Edits:        tes,
			})
		case workspace.ChangeCreate:
			if err := need("create"); err != nil {
				return nil, nil, err
			}
			op := &CreateFile{Kind: "create", URI: uri}
			if c.Overwrite || c.IgnoreIfExists {
				op.Options = &CreateFileOptions{Overwrite: c.Overwrite, IgnoreIfExists: c.IgnoreIfExists}
			}
			add(i, op)
			if c.NewText != "" {
				add(i, &TextDocumentEdit{
					TextDocument: OptionalVersionedTextDocumentIdentifier{URI: uri},
					Edits:        []TextEdit{{NewText: c.NewText}},
				})
			}
		case workspace.ChangeRename:
			if err := need("rename"); err != nil {
				return nil, nil, err
			}
			op := &RenameFile{Kind: "rename", OldURI: uri, NewURI: FileURI(c.NewPath)}
			if c.Overwrite || c.IgnoreIfExists {
				op.Options = &CreateFileOptions{Overwrite: c.Overwrite, IgnoreIfExists: c.IgnoreIfExists}
			}
			add(i, op)
		case workspace.ChangeDelete:
			if err := need("delete"); err != nil {
				return nil, nil, err
			}
			op := &DeleteFile{Kind: "delete", URI: uri}
			if c.Recursive {
				op.Options = &DeleteFileOptions{Recursive: true}
			}
			add(i, op)
		default:
			return nil, nil, fmt.Errorf("unknown change kind %d", c.Kind)
		}
	}
	return edit, origin, nil
}

// TextEdits computes the LSP text edits that turn oldText into newText, with ranges in enc
// measured on oldText.
func TextEdits(oldText, newText string, enc workspace.PositionEncoding) ([]TextEdit, error) {
	edits := workspace.ComputeEdits(oldText, newText)
	if len(edits) == 0 {
		return nil, nil
	}
	x := workspace.NewLineIndex(oldText)
	out := make([]TextEdit, 0, len(edits))
	for _, e := range edits {
		s, err := x.Position(e.Start, enc)
		if err != nil {
			return nil, err
		}
		t, err := x.Position(e.End, enc)
		if err != nil {
			return nil, err
		}
		out = append(out, TextEdit{
			Range:   Range{Start: Position{s.Line, s.Character}, End: Position{t.Line, t.Character}},
			NewText: e.NewText,
		})
	}
	return out, nil
}

// describe is used in errors that name a change.
func describe(c workspace.Change) string {
	switch c.Kind {
	case workspace.ChangeCreate:
		return "create " + c.Path
	case workspace.ChangeRename:
		return "rename " + c.Path + " → " + c.NewPath
	case workspace.ChangeDelete:
		return "delete " + c.Path
	}
	return "edit " + c.Path
}

// EditorState asks the editor what the user is looking at (agent/x/editor_state). Without the
// capability it is ErrUnsupported. Each field is read on its own: a malformed one is dropped and
// named in the error, which then comes with what could be read.
func (w *editorWorkspace) EditorState(ctx context.Context) (workspace.EditorState, error) {
	var raw json.RawMessage
	served, err := w.b.callOptional(ctx, w.b.caps.Agent.EditorState, protocol.MethodEditorState,
		protocol.EditorStateParams{SessionID: w.sessionID}, &raw)
	if err != nil {
		return workspace.EditorState{}, fmt.Errorf("asking the editor for its state: %w", err)
	}
	if !served {
		return workspace.EditorState{}, workspace.ErrUnsupported
	}
	return decodeEditorState(raw)
}

// maxOpenFilesRead bounds how many open files are read from an answer; the rest are counted.
const maxOpenFilesRead = 1000

// decodeEditorState reads an editor_state answer field by field.
func decodeEditorState(raw json.RawMessage) (workspace.EditorState, error) {
	var st workspace.EditorState
	var fields struct {
		ActiveFile json.RawMessage `json:"activeFile"`
		Selection  json.RawMessage `json:"selection"`
		OpenFiles  json.RawMessage `json:"openFiles"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return st, fmt.Errorf("the editor's state is not an object: %w", err)
	}
	var bad []string
	if isSet(fields.ActiveFile) && json.Unmarshal(fields.ActiveFile, &st.ActiveFile) != nil {
		bad = append(bad, "activeFile")
	}
	if isSet(fields.Selection) {
		var sel protocol.EditorSelection
		if json.Unmarshal(fields.Selection, &sel) != nil {
			bad = append(bad, "selection")
		} else {
			st.Selection = &workspace.Selection{Path: sel.Path, StartLine: sel.StartLine, EndLine: sel.EndLine, Text: sel.Text}
		}
	}
	if isSet(fields.OpenFiles) {
		var items []json.RawMessage
		if json.Unmarshal(fields.OpenFiles, &items) != nil {
			bad = append(bad, "openFiles")
		}
		dropped := 0
		for _, it := range items {
			var p string
			if !isSet(it) || json.Unmarshal(it, &p) != nil {
				dropped++
				continue
			}
			if len(st.OpenFiles) < maxOpenFilesRead {
				st.OpenFiles = append(st.OpenFiles, p)
			} else {
				st.MoreOpenFiles++
			}
		}
		if dropped > 0 {
			bad = append(bad, fmt.Sprintf("openFiles (%d entries not strings)", dropped))
		}
	}
	if len(bad) > 0 {
		return st, fmt.Errorf("the editor's state has malformed fields, dropped: %s", strings.Join(bad, ", "))
	}
	return st, nil
}

func isSet(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
