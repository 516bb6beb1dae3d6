package fakeeditor

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

func TestOffsetOf(t *testing.T) {
	text := "a😀b\r\n漢\rx\n"
	for _, c := range []struct {
		enc  workspace.PositionEncoding
		pos  editorbridge.Position
		want int
	}{
		{workspace.UTF16, editorbridge.Position{Line: 0, Character: 3}, 5},
		{workspace.UTF8, editorbridge.Position{Line: 0, Character: 5}, 5},
		{workspace.UTF32, editorbridge.Position{Line: 0, Character: 2}, 5},
		{workspace.UTF16, editorbridge.Position{Line: 0, Character: 4}, 6},
		{workspace.UTF16, editorbridge.Position{Line: 1, Character: 1}, 11},
		{workspace.UTF16, editorbridge.Position{Line: 2, Character: 1}, 13},
		{workspace.UTF16, editorbridge.Position{Line: 3, Character: 0}, 14},
	} {
		got, err := offsetOf(text, c.pos, c.enc)
		if err != nil || got != c.want {
			t.Errorf("offsetOf(%v, %s) = %d, %v; want %d", c.pos, c.enc, got, err, c.want)
		}
	}
	for _, bad := range []editorbridge.Position{{Line: 0, Character: 2}, {Line: 0, Character: 9}, {Line: 5}} {
		if got, err := offsetOf(text, bad, workspace.UTF16); err == nil {
			t.Errorf("offsetOf(%v) = %d, want an error (inside a character, past the line, no such line)", bad, got)
		}
	}
}

// agentSide is a bare JSON-RPC peer standing in for agentd.
func agentSide(t *testing.T, opts Options) (*Editor, *jsonrpc.Conn, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	edEnd, agentEnd := Pipe()
	ed := New(t, edEnd, opts)
	c := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	c.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	t.Cleanup(func() { c.Close() })
	return ed, c, dir
}

func call(t *testing.T, c *jsonrpc.Conn, method string, params, result any) error {
	t.Helper()
	return c.Call(context.Background(), method, params, result)
}

func TestReadTextFileServesBuffersAndRanges(t *testing.T) {
	ed, c, dir := agentSide(t, Full())
	p := filepath.Join(dir, "f.txt")
	os.WriteFile(p, []byte("1\n2\n3\n4\n"), 0o644)
	var res protocol.ReadTextFileResult
	two, one := 2, 1
	if err := call(t, c, protocol.MethodReadTextFile, protocol.ReadTextFileParams{Path: p, Line: &two, Limit: &one}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Content != "2\n" || res.Meta != nil {
		t.Errorf("disk read = %+v", res)
	}
	ed.Open(p, "buffer\n")
	if err := call(t, c, protocol.MethodReadTextFile, protocol.ReadTextFileParams{Path: p}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Content != "buffer\n" || res.Meta["agentd/version"] != float64(1) || res.Meta["agentd/dirty"] != true {
		t.Errorf("buffer read = %+v", res)
	}
	err := call(t, c, protocol.MethodReadTextFile, protocol.ReadTextFileParams{Path: filepath.Join(dir, "nope")}, &res)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != protocol.CodeServerNotInit {
		t.Errorf("missing file: %v, want -32002", err)
	}
}

func TestApplyEditIsAtomicAndVersionChecked(t *testing.T) {
	ed, c, dir := agentSide(t, Full())
	a := filepath.Join(dir, "a.txt")
	os.WriteFile(a, []byte("alpha\n"), 0o644)
	ed.OpenFile(a)
	v1 := int32(1)
	edit := func(version *int32, extra ...any) editorbridge.ApplyWorkspaceEditResult {
		t.Helper()
		changes := append([]any{
			&editorbridge.CreateFile{Kind: "create", URI: editorbridge.FileURI(filepath.Join(dir, "new.txt"))},
			&editorbridge.TextDocumentEdit{
				TextDocument: editorbridge.OptionalVersionedTextDocumentIdentifier{URI: editorbridge.FileURI(a), Version: version},
				Edits:        []editorbridge.TextEdit{{Range: editorbridge.Range{Start: editorbridge.Position{Character: 5}, End: editorbridge.Position{Character: 5}}, NewText: "!"}},
			},
		}, extra...)
		var res editorbridge.ApplyWorkspaceEditResult
		if err := call(t, c, protocol.MethodApplyEdit, editorbridge.ApplyWorkspaceEditParams{Label: "t", Edit: editorbridge.WorkspaceEdit{DocumentChanges: changes}}, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	ed.Edit(a, "alpha\n") // version 2
	res := edit(&v1)
	if res.Applied || !strings.Contains(res.FailureReason, "stale") || res.FailedChange == nil || *res.FailedChange != 1 {
		t.Fatalf("stale edit = %+v", res)
	}
	if _, ok := ed.Lookup(filepath.Join(dir, "new.txt")); ok {
		t.Fatal("the create before the stale edit was applied: not atomic")
	}
	v2 := int32(2)
	if res := edit(&v2, &editorbridge.DeleteFile{Kind: "delete", URI: editorbridge.FileURI(filepath.Join(dir, "missing"))}); res.Applied {
		t.Fatalf("delete of a missing file applied: %+v", res)
	}
	if res := edit(&v2); !res.Applied {
		t.Fatalf("edit = %+v", res)
	}
	if got := ed.Text(a); got != "alpha!\n" {
		t.Errorf("buffer = %q", got)
	}
	if v, _ := ed.Version(a); v != 3 || !ed.Dirty(a) {
		t.Errorf("version %d dirty %v after the edit", v, ed.Dirty(a))
	}
	if b, _ := os.ReadFile(a); string(b) != "alpha\n" {
		t.Errorf("the edit reached the disk: %q", b)
	}
	ed.SaveAll()
	if b, _ := os.ReadFile(a); string(b) != "alpha!\n" || ed.Dirty(a) {
		t.Errorf("after SaveAll: disk %q dirty %v", b, ed.Dirty(a))
	}
	if n := len(ed.AppliedEdits()); n != 1 {
		t.Errorf("%d edits recorded, want 1", n)
	}
}

func TestUnadvertisedRequestFailsTheTest(t *testing.T) {
	ft := &fakeT{TB: t}
	edEnd, agentEnd := Pipe()
	ed := New(ft, edEnd, Minimal())
	c := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	c.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	defer c.Close()
	err := call(t, c, protocol.MethodDiagnostics, protocol.DiagnosticsParams{}, new(json.RawMessage))
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != protocol.CodeMethodNotFound {
		t.Errorf("err = %v, want -32601", err)
	}
	if !strings.Contains(strings.Join(ft.errors, "\n"), "did not advertise") {
		t.Errorf("errors = %v, want one saying the editor did not advertise the method", ft.errors)
	}
	_ = ed
}

// fakeT records Errorf instead of failing.
type fakeT struct {
	testing.TB
	errors []string
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.errors = append(f.errors, strings.TrimSpace(format))
}
