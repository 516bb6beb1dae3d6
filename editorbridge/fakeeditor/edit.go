package fakeeditor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/workspace"
)

// editWire is workspace/applyEdit as it arrives; document changes stay raw until their kind is
// known.
type editWire struct {
	Label string `json:"label"`
	Edit  struct {
		Changes         map[string][]editorbridge.TextEdit `json:"changes"`
		DocumentChanges []json.RawMessage                  `json:"documentChanges"`
	} `json:"edit"`
}

// diskOp is one file-system step of an accepted edit, performed in order at commit.
type diskOp struct {
	kind      string // write | rename | remove
	path, dst string
	text      string
}

// editStage is the editor's state as an edit would leave it, built before anything is touched so
// a refused edit changes nothing.
type editStage struct {
	e      *Editor
	bufs   map[string]*buffer
	disk   map[string]*string // staged file contents; nil value = deleted
	gone   []string           // directories deleted or moved away
	ops    []diskOp
	record editorbridge.ApplyWorkspaceEditParams
}

func (s *editStage) fileText(path string) (string, bool) {
	if b := s.bufs[path]; b != nil {
		return b.text, true
	}
	if t, ok := s.disk[path]; ok {
		if t == nil {
			return "", false
		}
		return *t, true
	}
	for _, g := range s.gone {
		if strings.HasPrefix(path, g+string(filepath.Separator)) {
			return "", false
		}
	}
	return diskText(path)
}

func (s *editStage) exists(path string) bool {
	if _, ok := s.fileText(path); ok {
		return true
	}
	if _, ok := s.disk[path]; ok {
		return false
	}
	for _, g := range s.gone {
		if path == g || strings.HasPrefix(path, g+string(filepath.Separator)) {
			return false
		}
	}
	_, err := os.Stat(path)
	return err == nil
}

func uriPath(uri string) (string, error) {
	p, err := editorbridge.URIPath(uri)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute file URI", uri)
	}
	return p, nil
}

// applyEdit validates the whole edit against a staged copy and commits it only if every change
// holds, answering applied:false with the reason otherwise.
func (e *Editor) applyEdit(p editWire) editorbridge.ApplyWorkspaceEditResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	fail := func(i int, format string, args ...any) editorbridge.ApplyWorkspaceEditResult {
		r := editorbridge.ApplyWorkspaceEditResult{FailureReason: fmt.Sprintf(format, args...)}
		if i >= 0 {
			idx := uint32(i)
			r.FailedChange = &idx
		}
		return r
	}
	if e.refuse != "" {
		return fail(-1, "%s", e.refuse)
	}
	s := &editStage{e: e, bufs: map[string]*buffer{}, disk: map[string]*string{}}
	for path, b := range e.bufs {
		c := *b
		s.bufs[path] = &c
	}
	s.record.Label = p.Label
	if p.Edit.Changes != nil && p.Edit.DocumentChanges != nil {
		e.errorfLocked("workspace/applyEdit carries both changes and documentChanges")
	}
	if p.Edit.DocumentChanges != nil && !e.opts.DocumentChanges {
		e.errorfLocked("workspace/applyEdit uses documentChanges, which this editor did not advertise")
		return fail(-1, "documentChanges not supported")
	}
	paths := make([]string, 0, len(p.Edit.Changes))
	for uri := range p.Edit.Changes {
		paths = append(paths, uri)
	}
	slices.Sort(paths)
	for i, uri := range paths {
		if err := s.textEdit(uri, nil, p.Edit.Changes[uri]); err != nil {
			return fail(i, "%v", err)
		}
	}
	if p.Edit.Changes != nil {
		s.record.Edit.Changes = p.Edit.Changes
	}
	for i, raw := range p.Edit.DocumentChanges {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return fail(i, "malformed document change: %v", err)
		}
		var err error
		switch head.Kind {
		case "":
			var te editorbridge.TextDocumentEdit
			if err = json.Unmarshal(raw, &te); err == nil {
				s.record.Edit.DocumentChanges = append(s.record.Edit.DocumentChanges, &te)
				err = s.textEdit(te.TextDocument.URI, te.TextDocument.Version, te.Edits)
			}
		case "create":
			var op editorbridge.CreateFile
			if err = json.Unmarshal(raw, &op); err == nil {
				s.record.Edit.DocumentChanges = append(s.record.Edit.DocumentChanges, &op)
				err = s.create(op)
			}
		case "rename":
			var op editorbridge.RenameFile
			if err = json.Unmarshal(raw, &op); err == nil {
				s.record.Edit.DocumentChanges = append(s.record.Edit.DocumentChanges, &op)
				err = s.rename(op)
			}
		case "delete":
			var op editorbridge.DeleteFile
			if err = json.Unmarshal(raw, &op); err == nil {
				s.record.Edit.DocumentChanges = append(s.record.Edit.DocumentChanges, &op)
				err = s.remove(op)
			}
		default:
			err = fmt.Errorf("unknown document change kind %q", head.Kind)
		}
		if err != nil {
			return fail(i, "%v", err)
		}
	}
	// Commit: the disk steps in order, then the buffers.
	for _, op := range s.ops {
		var err error
		switch op.kind {
		case "write":
			if err = os.MkdirAll(filepath.Dir(op.path), 0o755); err == nil {
				err = os.WriteFile(op.path, []byte(op.text), 0o644)
			}
		case "rename":
			if err = os.MkdirAll(filepath.Dir(op.dst), 0o755); err == nil {
				err = os.Rename(op.path, op.dst)
			}
		case "remove":
			err = os.RemoveAll(op.path)
		}
		if err != nil {
			e.errorfLocked("applying %s %s: %v", op.kind, op.path, err)
			return fail(-1, "%v", err)
		}
	}
	e.bufs = s.bufs
	e.edits = append(e.edits, s.record)
	e.changedLocked()
	return editorbridge.ApplyWorkspaceEditResult{Applied: true}
}

func (e *Editor) errorfLocked(format string, args ...any) {
	if !e.done {
		e.t.Errorf("fakeeditor: "+format, args...)
	}
}

func (s *editStage) textEdit(uri string, version *int32, edits []editorbridge.TextEdit) error {
	path, err := uriPath(uri)
	if err != nil {
		return err
	}
	b := s.bufs[path]
	if version != nil {
		if b == nil {
			return fmt.Errorf("%s: version %d given but the document is not open", path, *version)
		}
		if b.version != *version {
			return fmt.Errorf("%s: stale version %d, the document is at version %d", path, *version, b.version)
		}
	}
	if b == nil {
		text, ok := s.fileText(path)
		if !ok {
			return fmt.Errorf("%s does not exist", path)
		}
		// Like an editor, open the document to apply the edit; it stays open and unsaved.
		b = &buffer{text: text, version: 1}
		s.bufs[path] = b
	}
	text, err := applyTextEdits(b.text, edits, s.e.enc)
	if err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	b.text, b.version, b.dirty = text, b.version+1, true
	return nil
}

func (s *editStage) create(op editorbridge.CreateFile) error {
	path, err := uriPath(op.URI)
	if err != nil {
		return err
	}
	var o editorbridge.CreateFileOptions
	if op.Options != nil {
		o = *op.Options
	}
	if s.exists(path) {
		switch {
		case o.Overwrite:
		case o.IgnoreIfExists:
			return nil
		default:
			return fmt.Errorf("%s already exists", path)
		}
	}
	empty := ""
	s.disk[path] = &empty
	s.ops = append(s.ops, diskOp{kind: "write", path: path})
	if b := s.bufs[path]; b != nil {
		b.text, b.version, b.dirty = "", b.version+1, false
	}
	return nil
}

func (s *editStage) rename(op editorbridge.RenameFile) error {
	from, err := uriPath(op.OldURI)
	if err != nil {
		return err
	}
	to, err := uriPath(op.NewURI)
	if err != nil {
		return err
	}
	if !s.exists(from) {
		return fmt.Errorf("%s does not exist", from)
	}
	var o editorbridge.CreateFileOptions
	if op.Options != nil {
		o = *op.Options
	}
	if s.exists(to) {
		switch {
		case o.Overwrite:
		case o.IgnoreIfExists:
			return nil
		default:
			return fmt.Errorf("%s already exists", to)
		}
	}
	if t, ok := s.fileText(from); ok {
		s.disk[to] = &t
		s.disk[from] = nil
	} else {
		s.gone = append(s.gone, from)
	}
	s.ops = append(s.ops, diskOp{kind: "rename", path: from, dst: to})
	for p, b := range s.bufs {
		if p == from || strings.HasPrefix(p, from+string(filepath.Separator)) {
			delete(s.bufs, p)
			s.bufs[to+strings.TrimPrefix(p, from)] = b
		}
	}
	return nil
}

func (s *editStage) remove(op editorbridge.DeleteFile) error {
	path, err := uriPath(op.URI)
	if err != nil {
		return err
	}
	var o editorbridge.DeleteFileOptions
	if op.Options != nil {
		o = *op.Options
	}
	if !s.exists(path) {
		if o.IgnoreIfNotExists {
			return nil
		}
		return fmt.Errorf("%s does not exist", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		entries, _ := os.ReadDir(path)
		if len(entries) > 0 && !o.Recursive {
			return fmt.Errorf("%s is a directory that is not empty", path)
		}
		s.gone = append(s.gone, path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	s.disk[path] = nil
	s.ops = append(s.ops, diskOp{kind: "remove", path: path})
	for p := range s.bufs {
		if p == path || strings.HasPrefix(p, path+string(filepath.Separator)) {
			delete(s.bufs, p)
		}
	}
	return nil
}

// applyTextEdits applies LSP edits whose ranges all refer to text, with its own position
// arithmetic (deliberately not agentd's), and refuses overlaps and impossible positions.
func applyTextEdits(text string, edits []editorbridge.TextEdit, enc workspace.PositionEncoding) (string, error) {
	type span struct {
		start, end int
		text       string
		order      int
	}
	spans := make([]span, 0, len(edits))
	for i, te := range edits {
		s, err := offsetOf(text, te.Range.Start, enc)
		if err != nil {
			return "", err
		}
		t, err := offsetOf(text, te.Range.End, enc)
		if err != nil {
			return "", err
		}
		if t < s {
			return "", fmt.Errorf("range %v ends before it starts", te.Range)
		}
		spans = append(spans, span{s, t, te.NewText, i})
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	var out strings.Builder
	last := 0
	for _, sp := range spans {
		if sp.start < last {
			return "", errors.New("overlapping text edits")
		}
		out.WriteString(text[last:sp.start])
		out.WriteString(sp.text)
		last = sp.end
	}
	out.WriteString(text[last:])
	return out.String(), nil
}

// offsetOf converts an LSP position to a byte offset. Strict: a character past the end of the
// line or inside a character is an error, so the bridge's ranges are checked exactly.
func offsetOf(text string, p editorbridge.Position, enc workspace.PositionEncoding) (int, error) {
	lineStart := 0
	for line := 0; line < p.Line; line++ {
		i := strings.IndexAny(text[lineStart:], "\r\n")
		if i < 0 {
			return 0, fmt.Errorf("line %d does not exist", p.Line)
		}
		lineStart += i + 1
		if text[lineStart-1] == '\r' && lineStart < len(text) && text[lineStart] == '\n' {
			lineStart++
		}
	}
	line := text[lineStart:]
	if i := strings.IndexAny(line, "\r\n"); i >= 0 {
		line = line[:i]
	}
	n := 0
	for i, r := range line {
		if n == p.Character {
			return lineStart + i, nil
		}
		if n > p.Character {
			return 0, fmt.Errorf("position %d:%d is inside a character", p.Line, p.Character)
		}
		switch enc {
		case workspace.UTF8:
			if r == utf8.RuneError {
				n++ // one invalid byte (a valid U+FFFD is never in test texts)
			} else {
				n += utf8.RuneLen(r)
			}
		case workspace.UTF32:
			n++
		default:
			n += max(utf16.RuneLen(r), 1)
		}
	}
	if n == p.Character {
		return lineStart + len(line), nil
	}
	if n > p.Character {
		return 0, fmt.Errorf("position %d:%d is inside a character", p.Line, p.Character)
	}
	return 0, fmt.Errorf("position %d:%d is past the end of the line (%d units)", p.Line, p.Character, n)
}
