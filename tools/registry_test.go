package tools

import (
	"encoding/json"
	"testing"
)

// The tool names and effect classes are part of the wire contract (PROTOCOL.md).
var contract = map[string]Effect{
	"read_file": EffectRead, "list_dir": EffectRead, "search_text": EffectRead, "find_symbol": EffectRead,
	"get_diagnostics": EffectRead, "project_overview": EffectRead,
	"create_file": EffectWrite, "edit_file": EffectWrite, "create_dir": EffectWrite, "rename_path": EffectWrite,
	"move_path": EffectWrite, "delete_path": EffectWrite,
	"run_program": EffectExec, "add_dependency": EffectExec, "edit_module_config": EffectExec,
	"program_output": EffectRead, "program_stop": EffectRead,
}

var acpKinds = map[string]bool{"read": true, "edit": true, "delete": true, "move": true, "search": true, "execute": true, "think": true, "fetch": true, "switch_mode": true, "other": true}

func TestDefaultRegistry(t *testing.T) {
	reg := Default()
	if len(reg.List()) != len(contract) {
		t.Fatalf("%d tools registered, contract has %d", len(reg.List()), len(contract))
	}
	for name, eff := range contract {
		tool, ok := reg.Lookup(name)
		if !ok {
			t.Errorf("tool %s missing", name)
			continue
		}
		if tool.Effect() != eff {
			t.Errorf("%s: effect %v, want %v", name, tool.Effect(), eff)
		}
		if !acpKinds[tool.Kind()] {
			t.Errorf("%s: kind %q is not an ACP tool kind", name, tool.Kind())
		}
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
			Defs                 any                        `json:"$defs"`
			Ref                  string                     `json:"$ref"`
		}
		if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
			t.Errorf("%s: schema: %v", name, err)
			continue
		}
		if schema.Type != "object" || schema.Properties == nil || schema.Ref != "" || schema.Defs != nil {
			t.Errorf("%s: schema is not a self-contained object: %s", name, tool.Schema())
		}
		if schema.AdditionalProperties == nil || *schema.AdditionalProperties {
			t.Errorf("%s: schema allows unknown fields", name)
		}
		// Titles never panic, whatever arrives while arguments stream.
		for _, args := range []string{``, `{`, `{"path": "a`, `null`, `[]`, `{"path": 3}`, `{"command": ["go","test"]}`} {
			if tool.Title(json.RawMessage(args)) == "" {
				t.Errorf("%s: empty title for %q", name, args)
			}
		}
	}
	specs := reg.Specs()
	if specs[0].Name != "read_file" || string(specs[0].Schema) == "" {
		t.Fatalf("specs %+v", specs[0])
	}
}

func TestTitles(t *testing.T) {
	reg := Default()
	cases := map[string]string{
		"read_file":   `{"path": "main.go"}`,
		"run_program": `{"command": ["go", "test", "./..."]}`,
		"edit_file":   `{"path": "a.go", "edits": []}`,
		"search_text": `{"pattern": "TODO"}`,
	}
	want := map[string]string{
		"read_file":   "Read main.go",
		"run_program": "Run go test ./...",
		"edit_file":   "Edit a.go",
		"search_text": `Search "TODO"`,
	}
	for name, args := range cases {
		tool, _ := reg.Lookup(name)
		if got := tool.Title(json.RawMessage(args)); got != want[name] {
			t.Errorf("%s title %q, want %q", name, got, want[name])
		}
	}
}

func TestRunWithoutWorkspace(t *testing.T) {
	tool, _ := Default().Lookup("read_file")
	r := tool.Run(t.Context(), &Env{}, json.RawMessage(`{"path":"a"}`))
	mustErr(t, r, "no workspace")
	r = tool.Run(t.Context(), nil, json.RawMessage(`{"path":"a"}`))
	mustErr(t, r, "no workspace")
}
