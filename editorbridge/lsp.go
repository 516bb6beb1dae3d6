package editorbridge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
)

// The LSP 3.17 structures the bridge sends and reads, written by hand rather than taken from
// go.lsp.dev/protocol v1: its DocumentChange union and its optional fields only marshal right
// through its encoding/json/v2 codec, while agentd's connection uses encoding/json (explicit
// tags, omitempty), and these dozen structs are all the bridge needs.

// Position is 0-based; Character counts units of the negotiated position encoding.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// OptionalVersionedTextDocumentIdentifier has a version of null when agentd read the file from
// disk: the editor then applies the edit without a version check, as LSP allows.
type OptionalVersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version *int32 `json:"version"`
}

type TextDocumentEdit struct {
	TextDocument OptionalVersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                              `json:"edits"`
}

type CreateFileOptions struct {
	Overwrite      bool `json:"overwrite,omitempty"`
	IgnoreIfExists bool `json:"ignoreIfExists,omitempty"`
}

type CreateFile struct {
	Kind    string             `json:"kind"` // "create"
	URI     string             `json:"uri"`
	Options *CreateFileOptions `json:"options,omitempty"`
}

type RenameFile struct {
	Kind    string             `json:"kind"` // "rename"
	OldURI  string             `json:"oldUri"`
	NewURI  string             `json:"newUri"`
	Options *CreateFileOptions `json:"options,omitempty"`
}

type DeleteFileOptions struct {
	Recursive         bool `json:"recursive,omitempty"`
	IgnoreIfNotExists bool `json:"ignoreIfNotExists,omitempty"`
}

type DeleteFile struct {
	Kind    string             `json:"kind"` // "delete"
	URI     string             `json:"uri"`
	Options *DeleteFileOptions `json:"options,omitempty"`
}

// WorkspaceEdit carries either DocumentChanges (each a *TextDocumentEdit, *CreateFile,
// *RenameFile or *DeleteFile) or, for clients without documentChanges support, Changes.
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []any                 `json:"documentChanges,omitempty"`
}

type ApplyWorkspaceEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  WorkspaceEdit `json:"edit"`
}

type ApplyWorkspaceEditResult struct {
	Applied       bool    `json:"applied"`
	FailureReason string  `json:"failureReason,omitempty"`
	FailedChange  *uint32 `json:"failedChange,omitempty"`
}

// Diagnostic is an LSP diagnostic as the editor reports it.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"` // integer or string
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// Location is an LSP location; Range is absent in a WorkspaceSymbol that has only a URI.
type Location struct {
	URI   string `json:"uri"`
	Range *Range `json:"range,omitempty"`
}

// WorkspaceSymbol covers both LSP WorkspaceSymbol and the older SymbolInformation.
type WorkspaceSymbol struct {
	Name          string   `json:"name"`
	Kind          int      `json:"kind"`
	ContainerName string   `json:"containerName,omitempty"`
	Location      Location `json:"location"`
}

var symbolKinds = [...]string{"", "file", "module", "namespace", "package", "class", "method",
	"property", "field", "constructor", "enum", "interface", "function", "variable", "constant",
	"string", "number", "boolean", "array", "object", "key", "null", "enum_member", "struct",
	"event", "operator", "type_parameter"}

// SymbolKindName names an LSP SymbolKind.
func SymbolKindName(k int) string {
	if k > 0 && k < len(symbolKinds) {
		return symbolKinds[k]
	}
	return "symbol"
}

// FileURI turns an absolute path into a file:// URI.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// URIPath turns a file:// URI back into a path.
func URIPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	if u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file URI", uri)
	}
	return filepath.FromSlash(u.Path), nil
}
