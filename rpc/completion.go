package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"go.lsp.dev/uri"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/completion"
	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/workspace"
)

// MethodInlineCompletion is LSP 3.18's inline completion request.
const MethodInlineCompletion = "textDocument/inlineCompletion"

// MethodDidClose is LSP's textDocument/didClose. agentd syncs no text (it reads buffers when it
// needs them), but a client sends it when a document closes so that what the completion engine
// holds for the document goes with it.
const MethodDidClose = "textDocument/didClose"

// inlineCompletionParams is the part of LSP's InlineCompletionParams agentd reads.
type inlineCompletionParams struct {
	TextDocument struct {
		URI uri.URI `json:"uri"`
	} `json:"textDocument"`
	Position struct {
		Line      int `json:"line"`
		Character int `json:"character"`
	} `json:"position"`
}

// inlineCompletionList is LSP's InlineCompletionList.
type inlineCompletionList struct {
	Items []inlineCompletionItem `json:"items"`
}

type inlineCompletionItem struct {
	InsertText string `json:"insertText"`
}

// maxOtherFiles is how many other open files a completion reads for context.
const maxOtherFiles = 3

func validateInlineCompletion(p *inlineCompletionParams) error {
	if !p.TextDocument.URI.IsFile() {
		return paramError("textDocument.uri", "must be a file: URI")
	}
	if p.Position.Line < 0 || p.Position.Character < 0 {
		return paramError("position", "must not be negative")
	}
	return nil
}

// inlineCompletion answers textDocument/inlineCompletion: the buffer's text around the position,
// read from the editor (unsaved changes included), and the other open files, go to the
// completion engine; an empty list when there is nothing to suggest. A model that fails answers
// an empty list too (the engine logs it once): a typist never gets an error per keystroke.
func (s *Server) inlineCompletion(ctx context.Context, p *inlineCompletionParams) (inlineCompletionList, error) {
	none := inlineCompletionList{Items: []inlineCompletionItem{}}
	if !s.settings.Get().CompletionOn() {
		return none, nil
	}
	s.mu.Lock()
	bridge, enc := s.bridge, workspace.PositionEncoding(s.caps.PositionEncoding)
	s.mu.Unlock()
	if bridge == nil {
		return none, nil // not reached: requests before initialize are refused by the server
	}
	// The older request for the document was superseded when this one was read
	// (supersedeCompletion): its answer may otherwise still go out for text the editor no longer
	// has.
	path := p.TextDocument.URI.FsPath()
	roots, err := workspace.NewRoots(filepath.Dir(path))
	if err != nil {
		return none, paramError("textDocument.uri", err.Error())
	}
	ws := bridge.Workspace("", roots)
	doc, err := ws.ReadFile(ctx, path)
	if err != nil {
		s.log.Debug("inline completion: reading the document", zap.Error(err))
		return none, nil
	}
	off, err := workspace.NewLineIndex(doc.Text).Offset(workspace.Position{Line: p.Position.Line, Character: p.Position.Character}, enc)
	if err != nil {
		return none, paramError("position", err.Error())
	}
	req := completion.Request{
		Key:        string(p.TextDocument.URI),
		Path:       path,
		Language:   languageOf(path),
		Prefix:     doc.Text[:off],
		Suffix:     doc.Text[off:],
		LoadOthers: func() []completion.File { return s.otherOpenFiles(ctx, ws, path) },
	}
	text, err := s.completions().Complete(ctx, req)
	if err != nil || text == "" {
		return none, nil
	}
	if s.afterComplete != nil {
		s.afterComplete()
	}
	return inlineCompletionList{Items: []inlineCompletionItem{{InsertText: text}}}, nil
}

// completionSettingsChanged says whether inline completions are on with the current settings.
// Completion settings that name them but fail their checks (a provider that is not defined, an
// unknown endpoint) leave them off and the daemon otherwise working: the user is told once per
// distinct problem with a window/showMessage warning, never per keystroke.
func (s *Server) completionSettingsChanged(ctx context.Context) bool {
	st := s.settings.Get()
	msg := ""
	if st.Completion.Enabled() {
		if err := config.SoftProblem(st, "completion."); err != nil {
			msg = "agentd inline completions are off: " + err.Error()
		}
	}
	s.mu.Lock()
	told := s.completionProblem == msg
	s.completionProblem = msg
	s.mu.Unlock()
	if msg != "" && !told {
		s.log.Warn("inline completions are off", zap.String("reason", msg))
		s.showMessage(ctx, messageWarning, msg)
	}
	return st.Completion.Enabled() && msg == ""
}

// supersededAnswer is what a superseded textDocument/inlineCompletion answers: the empty list,
// as the engine answers one superseded before it returns (LSP lets a cancelled request answer
// null or RequestCancelled; the empty list needs nothing more of either client).
var supersededAnswer = json.RawMessage(`{"items":[]}`)

// supersedeCompletion runs on the read goroutine for each textDocument/inlineCompletion: the
// request in flight for the same document is cancelled, and its answer, however late it comes,
// is the empty list. The engine drops an answer superseded before its last check; the
// connection's writer replaces one superseded between that check and its place on the queue.
func (s *Server) supersedeCompletion(id jsonrpc.ID, params json.RawMessage) {
	var p struct {
		TextDocument struct {
			URI uri.URI `json:"uri"`
		} `json:"textDocument"`
	}
	if json.Unmarshal(params, &p) != nil || p.TextDocument.URI == "" {
		return // the handler answers the bad params
	}
	s.conn.Supersede(string(p.TextDocument.URI), id, supersededAnswer)
	s.mu.Lock()
	e := s.complete
	s.mu.Unlock()
	if e != nil { // no engine yet: nothing in flight
		e.Supersede(string(p.TextDocument.URI))
	}
}

// didClose drops what the completion engine holds for the closed document.
func (s *Server) didClose(_ context.Context, raw json.RawMessage) error {
	var p struct {
		TextDocument struct {
			URI uri.URI `json:"uri"` // as textDocument/inlineCompletion reads it: the same key
		} `json:"textDocument"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	s.mu.Lock()
	e := s.complete
	s.mu.Unlock()
	if e != nil && p.TextDocument.URI != "" {
		e.Forget(string(p.TextDocument.URI))
	}
	return nil
}

// completions is the connection's completion engine, made at its first use.
func (s *Server) completions() *completion.Engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.complete == nil {
		s.complete = &completion.Engine{
			Settings: func() config.Completion { return s.settings.Get().Completion },
			Resolve:  s.provs.Provider,
			Revision: s.provs.Revision,
			Log:      s.log.Named("completion"),
		}
	}
	return s.complete
}

// otherOpenFiles reads up to maxOtherFiles of the editor's other open files, for context. An
// editor that cannot say which files are open gives none.
func (s *Server) otherOpenFiles(ctx context.Context, ws workspace.Workspace, path string) []completion.File {
	es, ok := ws.(interface {
		EditorState(context.Context) (workspace.EditorState, error)
	})
	if !ok {
		return nil
	}
	st, err := es.EditorState(ctx)
	if err != nil && !errors.Is(err, workspace.ErrUnsupported) {
		s.log.Debug("inline completion: editor state", zap.Error(err))
	}
	var out []completion.File
	for _, f := range st.OpenFiles {
		if len(out) == maxOtherFiles {
			break
		}
		if f == path || !filepath.IsAbs(f) {
			continue
		}
		d, err := ws.ReadFile(ctx, f)
		if err != nil {
			continue
		}
		out = append(out, completion.File{Path: f, Text: d.Text})
	}
	return out
}

// languageOf names a file's language by its extension, as the model reads it.
func languageOf(path string) string {
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	switch ext {
	case "go":
		return "go"
	case "py":
		return "python"
	case "js", "mjs", "cjs", "jsx":
		return "javascript"
	case "ts", "tsx", "mts":
		return "typescript"
	case "rs":
		return "rust"
	case "rb":
		return "ruby"
	case "c", "h":
		return "c"
	case "cc", "cpp", "hpp", "cxx":
		return "cpp"
	case "java":
		return "java"
	case "kt":
		return "kotlin"
	case "lua":
		return "lua"
	case "sh", "bash":
		return "shell"
	case "md":
		return "markdown"
	}
	return ext
}
