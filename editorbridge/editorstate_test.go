package editorbridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// state asks the session workspace for the editor's state, as the session does.
func state(e *env) (workspace.EditorState, error) {
	es, ok := e.ws.(interface {
		EditorState(context.Context) (workspace.EditorState, error)
	})
	if !ok {
		panic("the editor workspace has no EditorState")
	}
	return es.EditorState(e.ctx)
}

// The fake editor answers from its buffers (the most recently opened one active) until a test
// scripts its state; the bridge reads the answer whole.
func TestEditorState(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	a, b := e.write(t, "a.go", "package a\n"), e.write(t, "b.go", "package b\n")
	e.ed.OpenFile(a)
	e.ed.OpenFile(b)
	st, err := state(e)
	if err != nil || st.ActiveFile != b || strings.Join(st.OpenFiles, ",") != a+","+b || st.Selection != nil {
		t.Fatalf("state = %+v, %v", st, err)
	}
	e.ed.SetEditorState(protocol.EditorStateResult{ActiveFile: a, OpenFiles: []string{a},
		Selection: &protocol.EditorSelection{Path: a, StartLine: 1, EndLine: 1, Text: "package a"}})
	st, err = state(e)
	if err != nil || st.ActiveFile != a || st.Selection == nil || st.Selection.Text != "package a" || st.Selection.EndLine != 1 {
		t.Fatalf("scripted state = %+v, %v", st, err)
	}
	var p protocol.EditorStateParams
	reqs := e.ed.WaitRequest(protocol.MethodEditorState, 2)
	if err := json.Unmarshal(reqs[0].Params, &p); err != nil || p.SessionID != "s1" {
		t.Errorf("params %s", reqs[0].Params)
	}
}

// A client that did not advertise editorState is never asked.
func TestEditorStateNotAdvertised(t *testing.T) {
	e := setup(t, fakeeditor.Minimal())
	if _, err := state(e); !errors.Is(err, workspace.ErrUnsupported) {
		t.Fatalf("err = %v", err)
	}
	if len(e.ed.Requests()) != 0 {
		t.Errorf("asked anyway: %v", e.ed.Requests())
	}
}

// A malformed answer loses only its malformed fields; the error names them.
func TestEditorStateGarbage(t *testing.T) {
	e := setup(t, fakeeditor.Full())
	a := e.path("a.go")
	cases := []struct {
		raw     string
		want    workspace.EditorState
		errWant string
	}{
		{`{"activeFile": 5, "openFiles": ["` + a + `", 7, null, {"x": 1}]}`, workspace.EditorState{OpenFiles: []string{a}}, "activeFile, openFiles (3 entries not strings)"},
		{`{"activeFile": "` + a + `", "selection": "all of it", "openFiles": "` + a + `"}`, workspace.EditorState{ActiveFile: a}, "selection, openFiles"},
		{`[1, 2]`, workspace.EditorState{}, "not an object"},
		{`"hello"`, workspace.EditorState{}, "not an object"},
		{`{}`, workspace.EditorState{}, ""},
		{`null`, workspace.EditorState{}, ""},
	}
	for _, c := range cases {
		e.ed.SetEditorStateRaw(json.RawMessage(c.raw))
		st, err := state(e)
		if (c.errWant == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.errWant)) {
			t.Errorf("%s: err = %v, want %q", c.raw, err, c.errWant)
		}
		if st.ActiveFile != c.want.ActiveFile || strings.Join(st.OpenFiles, ",") != strings.Join(c.want.OpenFiles, ",") || st.Selection != nil {
			t.Errorf("%s: state = %+v, want %+v", c.raw, st, c.want)
		}
	}

	// A huge list is read up to a bound and the rest counted.
	files := make([]string, 5000)
	for i := range files {
		files[i] = a
	}
	e.ed.SetEditorState(protocol.EditorStateResult{OpenFiles: files})
	st, err := state(e)
	if err != nil || len(st.OpenFiles) != 1000 || st.MoreOpenFiles != 4000 {
		t.Errorf("huge list: %d kept, %d more, %v", len(st.OpenFiles), st.MoreOpenFiles, err)
	}
}
