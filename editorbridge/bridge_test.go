package editorbridge_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

type env struct {
	ed   *fakeeditor.Editor
	b    *editorbridge.Bridge
	ws   workspace.Workspace
	root string
	ctx  context.Context
}

func (e *env) path(rel string) string { return filepath.Join(e.root, rel) }

func (e *env) write(t *testing.T, rel, text string) string {
	t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// setup connects a fake editor to a bridge over a real JSON-RPC pipe.
func setup(t *testing.T, opts fakeeditor.Options) *env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	edEnd, agentEnd := fakeeditor.Pipe()
	ed := fakeeditor.New(t, edEnd, opts)
	conn := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	conn.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	t.Cleanup(func() { conn.Close() })
	b := editorbridge.New(conn, ed.BridgeCapabilities(), zaptest.NewLogger(t))
	roots, err := workspace.NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	return &env{ed: ed, b: b, ws: b.Workspace("s1", roots), root: root, ctx: context.Background()}
}

func notices(ed *fakeeditor.Editor, sessionID string) []protocol.SessionUpdate {
	var out []protocol.SessionUpdate
	for _, n := range ed.Updates() {
		if n.SessionID == sessionID && n.Update.SessionUpdate == protocol.UpdateNotice {
			out = append(out, n.Update)
		}
	}
	return out
}

// waitNotices waits until the session has n notices and returns them.
func waitNotices(t *testing.T, ed *fakeeditor.Editor, sessionID string, n int) []protocol.SessionUpdate {
	t.Helper()
	ed.Wait(fmt.Sprintf("%d notices", n), func() bool { return len(notices(ed, sessionID)) >= n })
	return notices(ed, sessionID)
}

func TestReadThroughEditor(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	open := e.write(t, "open.go", "package disk\n")
	closed := e.write(t, "closed.go", "package closed\n")
	e.ed.OpenFile(open)
	e.ed.Edit(open, "package buffer // unsaved\n")

	doc, err := e.ws.ReadFile(e.ctx, open)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "package buffer // unsaved\n" || doc.Version == nil || *doc.Version != 2 || !doc.Dirty {
		t.Errorf("open buffer read = %+v (version %v)", doc, doc.Version)
	}
	doc, err = e.ws.ReadFile(e.ctx, closed)
	if err != nil || doc.Text != "package closed\n" || doc.Version != nil || doc.Dirty {
		t.Errorf("closed file read = %+v, %v", doc, err)
	}
	_, err = e.ws.ReadFile(e.ctx, e.path("missing.go"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	if len(notices(e.ed, "s1")) != 0 {
		t.Errorf("notices sent although the editor serves reads: %v", notices(e.ed, "s1"))
	}
	reqs := e.ed.WaitRequest(protocol.MethodReadTextFile, 3)
	if !strings.Contains(string(reqs[0].Params), `"sessionId":"s1"`) {
		t.Errorf("read_text_file params lack the session: %s", reqs[0].Params)
	}
}

func TestReadFallsBackToDiskWithOneNotice(t *testing.T) {
	e := setup(t, fakeeditor.Minimal())
	p := e.write(t, "a.txt", "on disk\n")
	e.ed.Open(p, "in the buffer\n") // invisible to agentd without read_text_file
	for range 2 {
		doc, err := e.ws.ReadFile(e.ctx, p)
		if err != nil || doc.Text != "on disk\n" || doc.Version != nil {
			t.Fatalf("fallback read = %+v, %v", doc, err)
		}
	}
	roots, _ := workspace.NewRoots(e.root)
	if _, err := e.b.Workspace("s2", roots).ReadFile(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	e.ed.WaitUpdateKind("s2", protocol.UpdateNotice)
	if n := notices(e.ed, "s1"); len(n) != 1 || !strings.Contains(n[0].NoticeTitle, "disk") {
		t.Errorf("session s1 notices = %+v, want exactly one about disk reads", n)
	}
	if len(e.ed.Requests()) != 0 {
		t.Errorf("the bridge sent requests the editor does not serve: %v", e.ed.Requests())
	}
}

// edited is a text with emoji, CJK, combining marks and CRLF line ends.
const edited = "// 😀 héllo\r\nfunc 漢字() {\r\n\treturn \"e\u0301\" // 🎉🎉\r\n}\r\n"

func TestApplyEditPositionEncodings(t *testing.T) {
	changes := []struct{ name, newText string }{
		{"after emoji", strings.Replace(edited, "héllo", "hello, world", 1)},
		{"after combining mark", strings.Replace(edited, "// 🎉🎉", "// 🎉 done 🎉", 1)},
		{"CJK identifier", strings.Replace(edited, "漢字", "漢字二", 1)},
		{"two places", strings.Replace(strings.Replace(edited, "😀", "😃", 1), "}\r\n", "} // end\r\n", 1)},
		{"CRLF to LF", strings.ReplaceAll(edited, "\r\n", "\n")},
		{"insert a line", strings.Replace(edited, "{\r\n", "{\r\n\tx := 1 // ✓\r\n", 1)},
		{"delete everything", ""},
	}
	for _, enc := range []string{"utf-16", "utf-8", "utf-32"} {
		t.Run(enc, func(t *testing.T) {
			opts := fakeeditor.Full()
			opts.PositionEncodings = []string{enc}
			e := setup(t, opts)
			if got := e.b.Capabilities().PositionEncoding; got != enc {
				t.Fatalf("negotiated %s, want %s", got, enc)
			}
			for _, c := range changes {
				p := e.write(t, "f.go", edited)
				e.ed.CloseBuffer(p)
				e.ed.OpenFile(p)
				doc, err := e.ws.ReadFile(e.ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				err = e.ws.ApplyEdit(e.ctx, c.name, []workspace.Change{{
					Kind: workspace.ChangeEdit, Path: p, Version: doc.Version, OldText: doc.Text, NewText: c.newText,
				}})
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if got := e.ed.Text(p); got != c.newText {
					t.Fatalf("%s: buffer = %q, want %q", c.name, got, c.newText)
				}
				if v, _ := e.ed.Version(p); v != *doc.Version+1 {
					t.Errorf("%s: version %d after the edit, want %d", c.name, v, *doc.Version+1)
				}
				if disk, _ := os.ReadFile(p); string(disk) != edited {
					t.Errorf("%s: the edit reached the disk; it must stay in the buffer", c.name)
				}
			}
		})
	}
}

func TestApplyEditStaleVersion(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	p := e.write(t, "f.txt", "one\ntwo\n")
	e.ed.OpenFile(p)
	doc, err := e.ws.ReadFile(e.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	e.ed.Edit(p, "one\ntwo\nthree (typed by the user)\n")
	err = e.ws.ApplyEdit(e.ctx, "stale", []workspace.Change{{
		Kind: workspace.ChangeEdit, Path: p, Version: doc.Version, OldText: doc.Text, NewText: "ONE\ntwo\n",
	}})
	var na *workspace.NotAppliedError
	if !errors.As(err, &na) || !strings.Contains(na.Reason, "stale") || !strings.Contains(na.Reason, "edit "+p) {
		t.Fatalf("err = %v, want a NotAppliedError naming the stale version and the change", err)
	}
	if got := e.ed.Text(p); got != "one\ntwo\nthree (typed by the user)\n" {
		t.Errorf("a refused edit changed the buffer: %q", got)
	}
	e.ed.RefuseEdits("the user said no")
	err = e.ws.ApplyEdit(e.ctx, "refused", []workspace.Change{{Kind: workspace.ChangeCreate, Path: e.path("new.txt"), NewText: "x"}})
	if !errors.As(err, &na) || na.Reason != "the user said no" {
		t.Fatalf("err = %v, want the editor's reason", err)
	}
}

func TestApplyEditResourceOperations(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	a := e.write(t, "a.txt", "alpha\n")
	e.write(t, "old/b.txt", "beta\n")
	gone := e.write(t, "gone.txt", "bye\n")
	err := e.ws.ApplyEdit(e.ctx, "restructure", []workspace.Change{
		{Kind: workspace.ChangeCreate, Path: e.path("pkg/new.go"), NewText: "package pkg\n"},
		{Kind: workspace.ChangeRename, Path: e.path("old"), NewPath: e.path("renamed")},
		{Kind: workspace.ChangeDelete, Path: gone},
		{Kind: workspace.ChangeEdit, Path: a, OldText: "alpha\n", NewText: "alpha\nmore\n"},
		{Kind: workspace.ChangeCreate, Path: e.path("made/dir"), Dir: true},
		{Kind: workspace.ChangeCreate, Path: e.path("empty.txt")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		e.path("pkg/new.go"):    "package pkg\n",
		e.path("renamed/b.txt"): "beta\n",
		a:                       "alpha\nmore\n",
		e.path("empty.txt"):     "",
	} {
		if got, ok := e.ed.Lookup(p); !ok || got != want {
			t.Errorf("%s = %q (exists %v), want %q", p, got, ok, want)
		}
	}
	for _, p := range []string{gone, e.path("old/b.txt")} {
		if _, ok := e.ed.Lookup(p); ok {
			t.Errorf("%s still exists", p)
		}
	}
	if fi, err := os.Stat(e.path("made/dir")); err != nil || !fi.IsDir() {
		t.Errorf("directory not created: %v", err)
	}
	edits := e.ed.AppliedEdits()
	if len(edits) != 1 || edits[0].Label != "restructure" {
		t.Fatalf("applied edits = %+v, want one labelled restructure", edits)
	}
	kinds := []string{}
	for _, dc := range edits[0].Edit.DocumentChanges {
		switch v := dc.(type) {
		case *editorbridge.CreateFile:
			kinds = append(kinds, "create")
		case *editorbridge.RenameFile:
			kinds = append(kinds, "rename")
		case *editorbridge.DeleteFile:
			kinds = append(kinds, "delete")
		case *editorbridge.TextDocumentEdit:
			kinds = append(kinds, fmt.Sprintf("edit(v=%v)", v.TextDocument.Version))
		}
	}
	if got := strings.Join(kinds, " "); got != "create edit(v=<nil>) rename delete edit(v=<nil>) create" {
		t.Errorf("document changes = %s", got)
	}
	// On the wire: a file read from disk is edited with an explicit null version (no check),
	// resource operations carry their kind, and the directory never reaches the editor.
	log := e.ed.Log()
	for _, want := range []string{
		`{"textDocument":{"uri":"` + editorbridge.FileURI(a) + `","version":null},"edits":[{"range":{"start":{"line":1,"character":0},"end":{"line":1,"character":0}},"newText":"more\n"}]}`,
		`{"kind":"rename","oldUri":"` + editorbridge.FileURI(e.path("old")) + `","newUri":"` + editorbridge.FileURI(e.path("renamed")) + `"}`,
		`{"kind":"delete","uri":"` + editorbridge.FileURI(gone) + `"}`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the applyEdit on the wire lacks %s", want)
		}
	}
	if strings.Contains(log, "made/dir") {
		t.Error("the directory creation was sent to the editor")
	}
}

func TestApplyEditCapabilityGaps(t *testing.T) {
	t.Run("no applyEdit: disk and a notice", func(t *testing.T) {
		opts := fakeeditor.Full()
		opts.ApplyEdit = false
		e := setup(t, opts)
		p := e.write(t, "a.txt", "x\n")
		err := e.ws.ApplyEdit(e.ctx, "disk", []workspace.Change{
			{Kind: workspace.ChangeEdit, Path: p, OldText: "x\n", NewText: "y\n"},
			{Kind: workspace.ChangeCreate, Path: e.path("n.txt"), NewText: "n"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != "y\n" {
			t.Errorf("disk = %q", b)
		}
		if n := waitNotices(t, e.ed, "s1", 1); len(n) != 1 || !strings.Contains(n[0].NoticeTitle, "disk") {
			t.Errorf("notices = %+v", n)
		}
		var na *workspace.NotAppliedError
		err = e.ws.ApplyEdit(e.ctx, "stale", []workspace.Change{{Kind: workspace.ChangeEdit, Path: p, OldText: "x\n", NewText: "z\n"}})
		if !errors.As(err, &na) {
			t.Errorf("stale disk edit: %v", err)
		}
	})
	t.Run("no documentChanges: plain changes", func(t *testing.T) {
		opts := fakeeditor.Full()
		opts.DocumentChanges = false
		e := setup(t, opts)
		p := e.write(t, "a.txt", "x😀\n")
		e.ed.OpenFile(p)
		if err := e.ws.ApplyEdit(e.ctx, "plain", []workspace.Change{{Kind: workspace.ChangeEdit, Path: p, OldText: "x😀\n", NewText: "x😀y\n"}}); err != nil {
			t.Fatal(err)
		}
		if got := e.ed.Text(p); got != "x😀y\n" {
			t.Errorf("buffer = %q", got)
		}
		err := e.ws.ApplyEdit(e.ctx, "create", []workspace.Change{{Kind: workspace.ChangeCreate, Path: e.path("n.txt")}})
		if err == nil || !strings.Contains(err.Error(), "documentChanges") {
			t.Errorf("create without documentChanges: %v", err)
		}
	})
	t.Run("no delete resource op", func(t *testing.T) {
		opts := fakeeditor.Full()
		opts.ResourceOps = []string{"create", "rename"}
		e := setup(t, opts)
		p := e.write(t, "a.txt", "x")
		err := e.ws.ApplyEdit(e.ctx, "delete", []workspace.Change{{Kind: workspace.ChangeDelete, Path: p}})
		if err == nil || !strings.Contains(err.Error(), `"delete"`) {
			t.Errorf("delete without the resource op: %v", err)
		}
		if len(e.ed.AppliedEdits()) != 0 {
			t.Error("an edit was sent anyway")
		}
	})
	t.Run("no-op edit sends nothing", func(t *testing.T) {
		e := setup(t, fakeeditor.Full())
		p := e.write(t, "a.txt", "same")
		if err := e.ws.ApplyEdit(e.ctx, "noop", []workspace.Change{{Kind: workspace.ChangeEdit, Path: p, OldText: "same", NewText: "same"}}); err != nil {
			t.Fatal(err)
		}
		if len(e.ed.Requests()) != 0 {
			t.Errorf("requests = %v", e.ed.Requests())
		}
	})
}

func TestDiagnosticsSymbolsDirtySave(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	a := e.write(t, "a.go", "package a\n")
	b := e.write(t, "b.go", "package b\n")
	e.ed.SetDiagnostics(a, []editorbridge.Diagnostic{{
		Range:    editorbridge.Range{Start: editorbridge.Position{Line: 0, Character: 8}, End: editorbridge.Position{Line: 0, Character: 9}},
		Severity: 1, Code: []byte(`"UndeclaredName"`), Source: "compiler", Message: "undefined: x",
	}, {Severity: 2, Code: []byte(`1234`), Message: "numbered"}})
	diags, err := e.ws.Diagnostics(e.ctx, []string{a})
	if err != nil {
		t.Fatal(err)
	}
	want := workspace.Diagnostic{Line: 1, Column: 9, EndLine: 1, EndColumn: 10, Severity: 1, Source: "compiler", Code: "UndeclaredName", Message: "undefined: x"}
	if len(diags) != 1 || diags[0].Path != a || len(diags[0].Diagnostics) != 2 || diags[0].Diagnostics[0] != want || diags[0].Diagnostics[1].Code != "1234" {
		t.Errorf("diagnostics = %+v", diags)
	}

	e.ed.SetSymbols([]editorbridge.WorkspaceSymbol{
		{Name: "Handler", Kind: 23, ContainerName: "a", Location: editorbridge.Location{URI: editorbridge.FileURI(a), Range: &editorbridge.Range{Start: editorbridge.Position{Line: 4}}}},
		{Name: "handle", Kind: 12, Location: editorbridge.Location{URI: editorbridge.FileURI(b)}},
		{Name: "Other", Kind: 5, Location: editorbridge.Location{URI: editorbridge.FileURI(b)}},
	})
	syms, err := e.ws.WorkspaceSymbols(e.ctx, "handle")
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 2 || syms[0] != (workspace.Symbol{Name: "Handler", Kind: "struct", Container: "a", Path: a, Line: 5}) || syms[1].Kind != "function" || syms[1].Line != 0 {
		t.Errorf("symbols = %+v", syms)
	}

	e.ed.OpenFile(a)
	e.ed.Edit(a, "package a // edited\n")
	e.ed.OpenFile(b)
	dirty, err := e.ws.DirtyBuffers(e.ctx)
	if err != nil || len(dirty) != 1 || dirty[0].Path != a || dirty[0].Version == nil || *dirty[0].Version != 2 {
		t.Errorf("dirty buffers = %+v, %v", dirty, err)
	}

	e.ed.FailSave(b, "read-only file")
	res, err := e.ws.SaveBuffers(e.ctx, []string{a, b})
	if err != nil || len(res.Saved) != 1 || res.Saved[0] != a || res.Failed[b] != "read-only file" {
		t.Errorf("save = %+v, %v", res, err)
	}
	if disk, _ := os.ReadFile(a); string(disk) != "package a // edited\n" {
		t.Errorf("saved file on disk = %q", disk)
	}
}

func TestMissingCapabilities(t *testing.T) {
	e := setup(t, fakeeditor.Minimal())
	if _, err := e.ws.Diagnostics(e.ctx, nil); !errors.Is(err, workspace.ErrUnsupported) {
		t.Errorf("diagnostics: %v", err)
	}
	if _, err := e.ws.WorkspaceSymbols(e.ctx, "x"); !errors.Is(err, workspace.ErrUnsupported) {
		t.Errorf("symbols: %v", err)
	}
	if _, err := e.ws.SaveBuffers(e.ctx, []string{e.path("x")}); !errors.Is(err, workspace.ErrUnsupported) {
		t.Errorf("save: %v", err)
	}
	if d, err := e.ws.DirtyBuffers(e.ctx); err != nil || len(d) != 0 {
		t.Errorf("dirty: %v, %v", d, err)
	}
	if v, ok, err := e.b.Secret(e.ctx, "k"); ok || err != nil || v != "" {
		t.Errorf("secret = %q, %v, %v", v, ok, err)
	}
	if e.b.Client().CanAskPermission() {
		t.Error("CanAskPermission without permissions.ui")
	}
	if n := waitNotices(t, e.ed, "s1", 2); len(n) != 2 {
		t.Errorf("want a notice for diagnostics and one for saving, got %+v", n)
	}
	if len(e.ed.Requests()) != 0 {
		t.Errorf("requests sent to an editor that does not serve them: %v", e.ed.Requests())
	}
}

func TestSecret(t *testing.T) {
	opts := fakeeditor.Full()
	opts.Secrets = map[string]string{"anthropic": "sk-test"}
	e := setup(t, opts)
	if v, ok, err := e.b.Secret(e.ctx, "anthropic"); !ok || err != nil || v != "sk-test" {
		t.Errorf("secret = %q, %v, %v", v, ok, err)
	}
	if _, ok, err := e.b.Secret(e.ctx, "openai"); ok || err != nil {
		t.Errorf("absent secret: %v, %v", ok, err)
	}
}

func TestUpdatesInOrderAndAheadOfPermission(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	c := e.b.Client()
	const n = 500
	for i := range n {
		c.Update("s1", protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: "m",
			Content: &protocol.ContentBlock{Type: "text", Text: fmt.Sprint(i)}})
	}
	c.Update("s1", protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: "t1", Title: "Edit a.txt", Kind: "edit", Status: "pending"})
	e.ed.AnswerPermissions(protocol.OptionAllowOnce)
	res, err := c.RequestPermission(e.ctx, protocol.RequestPermissionParams{
		SessionID: "s1",
		ToolCall:  protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCallUpdate, ToolCallID: "t1", Title: "Edit a.txt"},
		Options:   []protocol.PermissionOption{{OptionID: protocol.OptionAllowOnce, Name: "Allow", Kind: "allow_once"}},
	})
	if err != nil || res.Outcome.Outcome != "selected" || res.Outcome.OptionID != protocol.OptionAllowOnce {
		t.Fatalf("permission = %+v, %v", res, err)
	}
	// The tool call was on the wire before the question about it, and every chunk before it, in
	// order (chunks queued during a write may arrive joined).
	ups := e.ed.Updates()
	if len(ups) == 0 || ups[len(ups)-1].Update.SessionUpdate != protocol.UpdateToolCall {
		t.Fatalf("updates before the permission request = %+v, want the tool call last", ups)
	}
	var want, got strings.Builder
	for i := range n {
		fmt.Fprint(&want, i)
	}
	for _, u := range ups[:len(ups)-1] {
		got.WriteString(u.Update.Content.Text)
	}
	if got.String() != want.String() {
		t.Fatalf("text before the permission request = %q, want %q", got.String(), want.String())
	}
	if !c.CanAskPermission() {
		t.Error("CanAskPermission = false with permissions.ui")
	}
}

func TestPermissionCancelSendsCancelRequest(t *testing.T) {
	opts := fakeeditor.Full()
	release := make(chan struct{})
	opts.Permission = func(protocol.RequestPermissionParams) protocol.PermissionOutcome {
		<-release
		return protocol.PermissionOutcome{Outcome: "cancelled"}
	}
	e := setup(t, opts)
	defer close(release)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() {
		res, err := e.b.Client().RequestPermission(ctx, protocol.RequestPermissionParams{SessionID: "s1",
			Options: []protocol.PermissionOption{{OptionID: "allow_once", Kind: "allow_once"}}})
		if err == nil || res.Outcome.Outcome != "cancelled" {
			err = fmt.Errorf("result %+v, err %v; want cancelled and an error", res, err)
		} else {
			err = nil
		}
		done <- err
	}()
	e.ed.WaitRequest(protocol.MethodRequestPermission, 1)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	e.ed.Wait("$/cancelRequest", func() bool { return strings.Contains(e.ed.Log(), `"method":"$/cancelRequest"`) })
}

func TestAdvertisedButUnimplementedFallsBack(t *testing.T) {
	opts := fakeeditor.Full()
	opts.Unimplemented = []string{protocol.MethodReadTextFile, protocol.MethodDiagnostics, protocol.MethodSecretsGet}
	e := setup(t, opts)
	p := e.write(t, "a.txt", "disk\n")
	for range 2 {
		doc, err := e.ws.ReadFile(e.ctx, p)
		if err != nil || doc.Text != "disk\n" {
			t.Fatalf("read = %+v, %v", doc, err)
		}
	}
	if _, err := e.ws.Diagnostics(e.ctx, nil); !errors.Is(err, workspace.ErrUnsupported) {
		t.Errorf("diagnostics: %v", err)
	}
	// The first -32601 already falls back with its notice, as for a client that never
	// advertised the method: one about disk reads, one about diagnostics.
	n := waitNotices(t, e.ed, "s1", 2)
	if len(n) != 2 || !strings.Contains(n[0].NoticeTitle, "disk") || !strings.Contains(n[1].NoticeTitle, "diagnostics") {
		t.Errorf("notices = %+v, want one about disk reads, then one about diagnostics", n)
	}
	if _, err := e.ws.Diagnostics(e.ctx, nil); !errors.Is(err, workspace.ErrUnsupported) {
		t.Errorf("diagnostics again: %v", err)
	}
	for range 2 {
		if _, ok, err := e.b.Secret(e.ctx, "k"); ok || err != nil {
			t.Errorf("secret: %v %v", ok, err)
		}
	}
	// One -32601 each, then the bridge stops asking.
	for _, m := range opts.Unimplemented {
		if got := len(e.ed.WaitRequest(m, 1)); got != 1 {
			t.Errorf("%d %s requests, want 1", got, m)
		}
	}
	if n := notices(e.ed, "s1"); len(n) != 2 {
		t.Errorf("notices = %+v, want each said once", n)
	}
}

// UpdateChunk is the engine's allocation-free way to send a streamed chunk: the editor must see
// exactly what Update sends for the same chunk.
func TestUpdateChunkSendsWhatUpdateSends(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	c := e.b.Client()
	for i, kind := range []string{protocol.UpdateAgentMessageChunk, protocol.UpdateAgentThoughtChunk} {
		text := fmt.Sprintf("chunk %d with \"quotes\" and \u00e9\n", i)
		c.Update("s1", protocol.SessionUpdate{SessionUpdate: kind, MessageID: fmt.Sprint("m-update-", i),
			Content: &protocol.ContentBlock{Type: "text", Text: text}})
		c.UpdateChunk("s2", kind, fmt.Sprint("m-chunk-", i), text)
	}
	e.ed.Wait("four updates", func() bool { return len(e.ed.Updates()) >= 4 })
	ups := e.ed.Updates()
	for i := 0; i < 4; i += 2 {
		a, b := ups[i], ups[i+1]
		if a.SessionID != "s1" || b.SessionID != "s2" {
			t.Fatalf("sessions %q, %q", a.SessionID, b.SessionID)
		}
		b.Update.MessageID = strings.Replace(b.Update.MessageID, "chunk", "update", 1)
		if !reflect.DeepEqual(a.Update, b.Update) {
			t.Errorf("UpdateChunk sent %+v %+v\nUpdate sent %+v %+v", b.Update, b.Update.Content, a.Update, a.Update.Content)
		}
	}
}

// BenchmarkUpdate measures session updates handed through the bridge to the fake editor over a
// real JSON-RPC pipe; the clock runs until the editor has all their text (chunks handed over
// while a write is in progress arrive joined).
func BenchmarkUpdate(b *testing.B) {
	edEnd, agentEnd := fakeeditor.Pipe()
	ed := fakeeditor.New(b, edEnd, fakeeditor.Full())
	conn := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	conn.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	b.Cleanup(func() { conn.Close() })
	br := editorbridge.New(conn, ed.BridgeCapabilities(), nil)
	c := br.Client()
	const token = "a token "
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: "m",
		Content: &protocol.ContentBlock{Type: "text", Text: token}}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		c.Update("s1", u)
		n++
	}
	ed.Wait("all updates", func() bool {
		total := 0
		for _, up := range ed.Updates() {
			total += len(up.Update.Content.Text)
		}
		return total >= n*len(token)
	})
	b.ReportMetric(float64(len(ed.Updates()))/float64(n), "notifications/update")
}

func TestCreateIgnoreIfExistsKeepsTheFile(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	p := e.write(t, "a.txt", "existing\n")
	err := e.ws.ApplyEdit(e.ctx, "create", []workspace.Change{
		{Kind: workspace.ChangeCreate, Path: p, IgnoreIfExists: true, NewText: "new\n"},
		{Kind: workspace.ChangeCreate, Path: e.path("b.txt"), IgnoreIfExists: true, NewText: "b\n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := e.ed.Text(p); got != "existing\n" {
		t.Errorf("existing file = %q, want it untouched", got)
	}
	if got := e.ed.Text(e.path("b.txt")); got != "b\n" {
		t.Errorf("new file = %q", got)
	}
}

// A client that is gone must not wedge the engine: updates are dropped (and logged) and every
// reverse request fails promptly.
func TestClosedConnectionDoesNotBlock(t *testing.T) {
	edEnd, agentEnd := fakeeditor.Pipe()
	conn := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	conn.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	edEnd.Close()
	<-conn.Done()
	b := editorbridge.New(conn, fakeeditor.Full().BridgeCaps(), nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 {
			b.Client().Update("s1", protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk})
		}
		root := t.TempDir()
		roots, _ := workspace.NewRoots(root)
		if _, err := b.Workspace("s1", roots).ReadFile(context.Background(), filepath.Join(root, "x")); err == nil {
			t.Error("a read over a closed connection succeeded")
		}
		if _, err := b.Client().RequestPermission(context.Background(), protocol.RequestPermissionParams{SessionID: "s1"}); err == nil {
			t.Error("a permission request over a closed connection succeeded")
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge blocked on a closed connection")
	}
	conn.Close()
}

// TestApplyEditRandomized edits random texts (emoji, CJK, combining marks, CRLF, lone CR) in
// every encoding: the bridge computes ranges with workspace's position code and the fake editor
// applies them with its own, so both must agree for the buffer to end up right.
func TestApplyEditRandomized(t *testing.T) {
	pieces := []string{"a", "b", "xyz", " ", "\t", "\n", "\r\n", "\r", "😀", "🎉", "漢", "字", "e\u0301", "ñ", "{", "}", "ü"}
	rng := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	mutate := func(s string) string {
		rs := []rune(s)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(rs) + 1)
			j := min(len(rs), i+rng.IntN(4))
			ins := []rune(text())
			if len(ins) > 6 {
				ins = ins[:6]
			}
			rs = append(rs[:i:i], append(ins, rs[j:]...)...)
		}
		return string(rs)
	}
	for _, enc := range []string{"utf-16", "utf-8", "utf-32"} {
		t.Run(enc, func(t *testing.T) {
			opts := fakeeditor.Full()
			opts.PositionEncodings = []string{enc}
			e := setup(t, opts)
			p := e.write(t, "r.txt", "")
			e.ed.OpenFile(p)
			for i := range 150 {
				doc, err := e.ws.ReadFile(e.ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				next := mutate(doc.Text)
				if i%10 == 0 {
					next = text()
				}
				err = e.ws.ApplyEdit(e.ctx, "r", []workspace.Change{{Kind: workspace.ChangeEdit, Path: p, Version: doc.Version, OldText: doc.Text, NewText: next}})
				if err != nil {
					t.Fatalf("step %d: %q → %q: %v", i, doc.Text, next, err)
				}
				if got := e.ed.Text(p); got != next {
					t.Fatalf("step %d: %q → %q gave %q", i, doc.Text, next, got)
				}
			}
		})
	}
}

// A notice reaches an LSP client that does not say it shows notice updates
// (clientCapabilities.notices) as window/showMessage too, typed by its severity; a client that
// shows them gets no second copy.
func TestNoticeAsShowMessage(t *testing.T) {
	for _, renders := range []bool{false, true} {
		opts := fakeeditor.Minimal()
		opts.Agent.Notices = renders
		e := setup(t, opts)
		e.b.Notice("s1", protocol.SeverityWarning, "Project settings ignored", "hooks: the project is not trusted")
		e.b.Notice("s1", protocol.SeverityError, "The model request failed", "")
		e.b.Notice("s1", protocol.SeverityInfo, "Using text tool calls", "the server refused native tools")
		waitNotices(t, e.ed, "s1", 3)
		if renders {
			// The notices and any message were written in order: one more notice marks the end.
			e.b.Notice("s1", protocol.SeverityInfo, "end", "")
			waitNotices(t, e.ed, "s1", 4)
			if got := e.ed.Shown(); len(got) != 0 {
				t.Errorf("a client that shows notices got them as messages too: %+v", got)
			}
			continue
		}
		e.ed.Wait("3 messages", func() bool { return len(e.ed.Shown()) == 3 })
		want := []fakeeditor.ShownMessage{
			{Type: 2, Message: "agentd: Project settings ignored: hooks: the project is not trusted"},
			{Type: 1, Message: "agentd: The model request failed"},
			{Type: 3, Message: "agentd: Using text tool calls: the server refused native tools"},
		}
		if got := e.ed.Shown(); !reflect.DeepEqual(got, want) {
			t.Errorf("window/showMessage = %+v, want %+v", got, want)
		}
	}
}

// The ACP door says a notice in ACP's terms (rpc/acp.go); it never sends window/showMessage.
func TestNoticeOnTheACPDoorSendsNoShowMessage(t *testing.T) {
	edEnd, agentEnd := fakeeditor.Pipe()
	ed := fakeeditor.New(t, edEnd, fakeeditor.Minimal())
	caps := ed.BridgeCapabilities()
	caps.ACP = true
	conn := jsonrpc.NewConn(agentEnd, agentEnd, jsonrpc.Options{CallTimeout: 5 * time.Second})
	conn.Go(context.Background(), jsonrpc.MethodNotFoundHandler)
	t.Cleanup(func() { conn.Close() })
	b := editorbridge.New(conn, caps, zaptest.NewLogger(t))
	b.Notice("s1", protocol.SeverityWarning, "Programs cannot be sandboxed here", "no Landlock")
	b.Notice("s1", protocol.SeverityInfo, "end", "")
	waitNotices(t, ed, "s1", 2)
	if got := ed.Shown(); len(got) != 0 {
		t.Errorf("the ACP door sent window/showMessage: %+v", got)
	}
}
