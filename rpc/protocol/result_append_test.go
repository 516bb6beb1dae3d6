package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestSessionNewResultMatchesMarshal holds the hand-written session/new answer to what
// encoding/json writes for the same fields, escaping, empty and nil values included.
func TestSessionNewResultMatchesMarshal(t *testing.T) {
	type plain SessionNewResult // the same fields without the MarshalJSON method
	opts := []ConfigOption{
		{ID: "mode", Name: "Mode", Category: "mode", Type: "select", CurrentValue: "ask",
			Options: []ConfigOptionValue{{Value: "ask", Name: "Ask <safe>"}, {Value: "auto", Name: "Auto", Description: "go & \"run\""}}},
		{ID: "model", Name: "Model", Type: "select", CurrentValue: "fm", Options: []ConfigOptionValue{},
			Meta: Meta{MetaPromptCapabilities: PromptCapabilities{Image: true, EmbeddedContext: true}}},
		{ID: "t", Name: "T\u2028", Description: "d\x01\xff", Type: "select"},
	}
	cases := []SessionNewResult{
		{},
		{SessionID: "sess_<1>", ConfigOptions: []ConfigOption{}},
		{SessionID: "sess_1", ConfigOptions: opts, Modes: &SessionModes{CurrentModeID: "ask"}},
		{SessionID: "sess_1", ConfigOptions: opts, Modes: &SessionModes{CurrentModeID: "plan", AvailableModes: []SessionMode{}}},
		{SessionID: "sess_1", Modes: &SessionModes{CurrentModeID: "auto", AvailableModes: []SessionMode{{ID: "ask", Name: "Ask"}, {ID: "auto", Name: "Auto", Description: "edits <freely>"}}},
			Meta: map[string]any{"agentd/instructions": []map[string]any{{"path": "/p/AGENTS.md", "bytes": 12}}, "b": nil, "a": "x&y", "é": []string{}}},
		{SessionID: "s", ConfigOptions: opts[:1], Meta: map[string]any{}},
	}
	for _, c := range cases {
		want, err := json.Marshal(plain(c))
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("MarshalJSON:\n got %s\nwant %s", got, want)
		}
		direct, _ := c.MarshalJSON()
		if !bytes.Equal(direct, want) {
			t.Errorf("MarshalJSON called directly:\n got %s\nwant %s", direct, want)
		}
	}
}

// TestSessionNewResultFieldsKnown fails when a field is added to the answer's types without
// MarshalJSON writing it (the cases above fill every field listed here).
func TestSessionNewResultFieldsKnown(t *testing.T) {
	known := map[reflect.Type][]string{
		reflect.TypeFor[SessionNewResult](): {"SessionID", "ConfigOptions", "Modes", "Meta"},
		reflect.TypeFor[SessionModes]():     {"CurrentModeID", "AvailableModes"},
		reflect.TypeFor[SessionMode]():      {"ID", "Name", "Description"},
	}
	for typ, names := range known {
		var got []string
		for f := range typ.Fields() {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, names) {
			t.Errorf("%s has fields %v; MarshalJSON writes %v: write the new ones and add them to the cases", typ, got, names)
		}
	}
}

// TestPromptCapabilitiesMarshal holds the hand-written MarshalJSON to encoding/json's output for
// every combination, alone and inside a _meta map.
func TestPromptCapabilitiesMarshal(t *testing.T) {
	type plain PromptCapabilities
	if n := reflect.TypeFor[PromptCapabilities]().NumField(); n != 3 {
		t.Fatalf("PromptCapabilities has %d fields; MarshalJSON writes 3", n)
	}
	for i := range 8 {
		c := PromptCapabilities{Image: i&1 != 0, Audio: i&2 != 0, EmbeddedContext: i&4 != 0}
		want, _ := json.Marshal(plain(c))
		got, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%+v: got %s, want %s", c, got, want)
		}
		wantMeta, _ := json.Marshal(map[string]any{MetaPromptCapabilities: plain(c)})
		gotMeta, _ := json.Marshal(Meta{MetaPromptCapabilities: c})
		if !bytes.Equal(gotMeta, wantMeta) {
			t.Errorf("in _meta: got %s, want %s", gotMeta, wantMeta)
		}
	}
}
