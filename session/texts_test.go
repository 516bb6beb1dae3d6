package session

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/tools"
)

// customSet is the built-in prompt config with one file's text replaced.
func customSet(t *testing.T, file, old, new string) *prompts.Set {
	t.Helper()
	m := fstest.MapFS{}
	fs.WalkDir(prompts.Builtin(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := fs.ReadFile(prompts.Builtin(), p)
			m[p] = &fstest.MapFile{Data: data}
		}
		return err
	})
	s := string(m[file].Data)
	if !strings.Contains(s, old) {
		t.Fatalf("%s holds no %q", file, old)
	}
	m[file] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
	set, err := prompts.Load(m, Catalog(tools.Default()))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestToolDescriptions is the seed's ToolDescriptionsTest: the built-in config describes every
// real tool and each of its arguments (and nothing else), and what the model is sent comes from
// the config.
func TestToolDescriptions(t *testing.T) {
	if _, err := prompts.Load(prompts.Builtin(), Catalog(tools.Default())); err != nil {
		t.Fatalf("the built-in prompt config does not describe the tools as they are:\n%v", err)
	}
	set := customSet(t, "tools.yml", "Read a text file of the project", "Lies a text file of the project")
	set2 := customSet(t, "tools.yml", `"File to read: relative`, `"Welche Datei: relative`)
	var read, read2 map[string]any
	for _, sp := range toolSpecs(set, tools.Default()) {
		if sp.Name == "read_file" {
			if !strings.HasPrefix(sp.Description, "Lies a text file") {
				t.Errorf("description %q", sp.Description)
			}
			json.Unmarshal(sp.Schema, &read)
		}
	}
	for _, sp := range toolSpecs(set2, tools.Default()) {
		if sp.Name == "read_file" {
			json.Unmarshal(sp.Schema, &read2)
		}
	}
	path := read2["properties"].(map[string]any)["path"].(map[string]any)
	if !strings.HasPrefix(path["description"].(string), "Welche Datei") {
		t.Errorf("argument description %v", path)
	}
	if read["required"] == nil || read2["properties"].(map[string]any)["start_line"] == nil {
		t.Errorf("the schema lost its shape: %v", read2)
	}
	sys := systemPrompt(set, tools.Default())
	if !strings.Contains(sys, "- read_file (read): Lies a text file") {
		t.Errorf("system prompt:\n%s", sys)
	}
	for _, tl := range tools.Default().List() {
		if !strings.Contains(sys, "- "+tl.Name()+" (") {
			t.Errorf("the system prompt lists no %s", tl.Name())
		}
	}
}

// TestSystemPromptConfigRendered: the identity and rules the model reads come from the config,
// and the system prompt holds nothing that changes within a session.
func TestSystemPromptConfigRendered(t *testing.T) {
	set := customSet(t, "rules.yml", `  - title: "How you work"`, "  - title: \"Safety\"\n    items:\n      - \"Never push to main.\"\n  - title: \"How you work\"")
	sys := systemPrompt(set, tools.Default())
	if !strings.HasPrefix(sys, "You are agentd, a coding agent") || !strings.Contains(sys, "\n\nSafety:\n- Never push to main.\n\nHow you work:\n- You read files") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	if strings.Contains(sys, "Working directory") || strings.Contains(sys, "Permission mode") {
		t.Fatalf("live facts in the system prompt:\n%s", sys)
	}
}
