package prompts

import (
	"io/fs"
	"maps"
	"strings"
	"testing"
	"testing/fstest"
)

// builtinFS copies the built-in set into a MapFS the cases below change one file of.
func builtinFS(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(Builtin(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(Builtin(), p)
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func with(t *testing.T, files map[string]string) fstest.MapFS {
	m := builtinFS(t)
	for name, data := range files {
		if data == "" {
			delete(m, name)
			continue
		}
		m[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return m
}

func replace(t *testing.T, name, old, new string) fstest.MapFS {
	t.Helper()
	m := builtinFS(t)
	s := string(m[name].Data)
	if !strings.Contains(s, old) {
		t.Fatalf("%s holds no %q", name, old)
	}
	m[name] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
	return m
}

// TestSystemPromptConfig is the seed's SystemPromptConfigTest: each loading rule, with the
// error it must name.
func TestSystemPromptConfig(t *testing.T) {
	agent := string(builtinFS(t)["agent.yml"].Data)
	cases := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"another schema version", replace(t, "agent.yml", "schema_version: 2", "schema_version: 3"), "agent.yml: schema_version is 3; this agentd reads schema_version 2"},
		{"schema version quoted", replace(t, "agent.yml", "schema_version: 2", `schema_version: "2"`), "agent.yml: schema_version must be a whole number"},
		{"no agent.yml", with(t, map[string]string{"agent.yml": ""}), "agent.yml: open agent.yml: file does not exist"},
		{"listed file missing", with(t, map[string]string{"rules.yml": ""}), "rules.yml: open rules.yml: file does not exist"},
		{"unlisted key missing", replace(t, "agent.yml", "  - rules.yml\n", ""), "agent.yml: rules is missing (no listed file defines it)"},
		{"nested include", replace(t, "rules.yml", "rules:", "include: [x.yml]\nrules:"), "rules.yml: include belongs in agent.yml"},
		{"include outside the folder", replace(t, "agent.yml", "  - rules.yml\n", "  - rules.yml\n  - ../x.yml\n"), `include[1] "../x.yml" must name a .yml file beside agent.yml`},
		{"key in two files", replace(t, "tasks.yml", "chat_title:", "loop:\n  cancelled: x\n  tool_crashed: y\nchat_title:"), "loop is defined in both messages.yml and tasks.yml"},
		{"key twice in a file", replace(t, "tasks.yml", "chat_title:", "chat_title:\n  system: a\nchat_title:"), "tasks.yml: chat_title is defined twice"},
		{"nested key twice", replace(t, "tasks.yml", "  system: \"You name", "  system: a\n  system: \"You name"), "tasks.yml: chat_title.system is defined twice (lines 3 and 4)"},
		{"unknown key", replace(t, "tasks.yml", "chat_title:", "chat_tiles:\n  system: a\nchat_title:"), "tasks.yml: unknown key chat_tiles (did you mean chat_title?)"},
		{"misspelled nested key", replace(t, "messages.yml", "  dismissed:", "  dismised:"), "messages.yml: unknown key approval.dismised (did you mean dismissed?)"},
		{"missing nested key", replace(t, "tasks.yml", "  acknowledgement: \"Understood. I will continue from this summary.\"\n", ""), "tasks.yml: compaction.acknowledgement is missing"},
		{"empty list", replace(t, "rules.yml", "    items:\n", "    items: []\n    other:\n"), "rules.yml: rules[0].items is empty"},
		{"empty list in the second rule", replace(t, "rules.yml", "rules:\n", "rules:\n  - title: First\n    items: [a]\n  - title: Second\n    items: []\n"), "rules.yml: rules[1].items is empty"},
		{"unquoted number", replace(t, "tasks.yml", `  system: "You name`, "  system: 42\n  x_system: \"You name"), "tasks.yml: chat_title.system is a number (42); quote it"},
		{"unquoted boolean", replace(t, "tasks.yml", `  system: "You name`, "  system: true\n  x_system: \"You name"), "tasks.yml: chat_title.system is not a text (true); quote it"},
		{"anchor", replace(t, "tasks.yml", `  system: "You name`, "  system: &a \"You name"), "tasks.yml: chat_title.system uses a YAML anchor or alias"},
		{"not YAML", with(t, map[string]string{"tasks.yml": "chat_title: [\n"}), "tasks.yml: yaml:"},
		{"unknown name", replace(t, "tasks.yml", "Answer with a title", "Answer {{TITEL}} with a title"), "tasks.yml: chat_title.system: unknown name {{TITEL}}"},
		{"unclosed section", replace(t, "tasks.yml", "Answer with a title", "Answer {{#SUMMARY}} with a title"), "tasks.yml: chat_title.system: section {{#SUMMARY}} is never closed"},
		{"lower-case tag", replace(t, "tasks.yml", "Answer with a title", "Answer {{title}} with a title"), "tasks.yml: chat_title.system: {{title}} is not a tag"},
		{"a text naming itself", replace(t, "agent.yml", `project."`, `project. {{IDENTITY}}"`), "agent.yml: identity: texts name each other more than 16 deep"},
	}
	_ = agent
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.fsys, nil)
			if err == nil {
				t.Fatalf("loaded; want an error naming %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error:\n%v\nwant it to hold %q", err, c.want)
			}
		})
	}
}

// TestUnlistedFileNotRead: a file beside agent.yml that include does not list is never opened,
// even when it is broken.
func TestUnlistedFileNotRead(t *testing.T) {
	m := with(t, map[string]string{"extra.yml": "rules: [broken"})
	if _, err := Load(openCounter{m, map[string]int{}}, nil); err != nil {
		t.Fatal(err)
	}
	oc := openCounter{m, map[string]int{}}
	Load(oc, nil)
	if oc.opened["extra.yml"] != 0 {
		t.Fatal("extra.yml was read")
	}
	if oc.opened["rules.yml"] != 1 {
		t.Fatalf("rules.yml opened %d times", oc.opened["rules.yml"])
	}
}

// openCounter counts the files opened; it hides MapFS's ReadFile so every read goes through Open.
type openCounter struct {
	m      fstest.MapFS
	opened map[string]int
}

func (o openCounter) Open(name string) (fs.File, error) {
	o.opened[name]++
	return o.m.Open(name)
}

// TestEveryShippedFileIncluded: a built-in file agent.yml does not list would never be read.
func TestEveryShippedFileIncluded(t *testing.T) {
	m := builtinFS(t)
	oc := openCounter{m, map[string]int{}}
	if _, err := Load(oc, nil); err != nil {
		t.Fatal(err)
	}
	for name := range maps.Keys(m) {
		if oc.opened[name] == 0 {
			t.Errorf("%s ships but agent.yml never includes it", name)
		}
	}
}

// TestToolEntriesChecked: every tool and argument described, and no entry for a tool or an
// argument that does not exist.
func TestToolEntriesChecked(t *testing.T) {
	cat := Catalog{"read_file": {"path", "start_line", "end_line"}}
	m := fstest.MapFS{}
	for k, v := range builtinFS(t) {
		m[k] = v
	}
	m["tools.yml"] = &fstest.MapFile{Data: []byte(`tools:
  read_file:
    description: "Read a file."
    arguments:
      path: "The file."
      start_line: "First line."
      end_lines: "Last line."
  raed_file:
    description: "Typo."
` + toolsYAMLRest(t))}
	_, err := Load(m, cat)
	if err == nil {
		t.Fatal("loaded")
	}
	for _, want := range []string{
		"tools.read_file.arguments.end_line is missing",
		"tools.read_file.arguments.end_lines names no argument of read_file",
		"tools.raed_file names no tool",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error:\n%v\nlacks %q", err, want)
		}
	}
	m["tools.yml"] = &fstest.MapFile{Data: []byte("tools:\n  read_file:\n    description: \"Read.\"\n    arguments: {path: a, start_line: b, end_line: c}\n" + toolsYAMLRest(t))}
	s, err := Load(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	desc, args, ok := s.Tool("read_file")
	if !ok || desc != "Read." || args["end_line"] != "c" {
		t.Fatalf("Tool = %q %v %v", desc, args, ok)
	}
	// A member of a list argument is described under fields, keyed as the catalog names it.
	cat = Catalog{"edit": {"edits", "edits.old_text"}}
	m["tools.yml"] = &fstest.MapFile{Data: []byte("tools:\n  edit:\n    description: \"Edit.\"\n    arguments: {edits: e}\n    fields:\n      edits: {old_txt: o}\n" + toolsYAMLRest(t))}
	_, err = Load(m, cat)
	if err == nil || !strings.Contains(err.Error(), "tools.edit.fields.edits.old_text is missing") || !strings.Contains(err.Error(), "tools.edit.fields.edits.old_txt names no argument of edit") {
		t.Fatalf("error %v", err)
	}
	m["tools.yml"] = &fstest.MapFile{Data: []byte("tools:\n  edit:\n    description: \"Edit.\"\n    arguments: {edits: e}\n    fields:\n      edits: {old_text: o}\n" + toolsYAMLRest(t))}
	if s, err = Load(m, cat); err != nil {
		t.Fatal(err)
	}
	if _, args, _ := s.Tool("edit"); args["edits.old_text"] != "o" || args["edits"] != "e" {
		t.Fatalf("args %v", args)
	}
}

// TestRunValuesVerbatim: a run value holding template syntax is inserted as it is.
func TestRunValuesVerbatim(t *testing.T) {
	s := Default()
	got := s.Render("layout.context", Run{"CWD": "/p/{{IDENTITY}}", "DIRTY_FILES": []string{"{{#RULES}}x{{/RULES}}"}})
	if !strings.Contains(got, "Working directory: /p/{{IDENTITY}}\n") || !strings.Contains(got, "editor: {{#RULES}}x{{/RULES}}\n") {
		t.Fatalf("got %q", got)
	}
}

// toolsYAMLRest is the built-in tools.yml without its tools map: the other keys it defines (the
// text tool-call protocol's), for tests that replace the tools map alone.
func toolsYAMLRest(t *testing.T) string {
	t.Helper()
	data, err := fs.ReadFile(Builtin(), "tools.yml")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	keep := false
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line != "" && line[0] != ' ' && line[0] != '#' && line[0] != '\n' {
			keep = !strings.HasPrefix(line, "tools:")
		}
		if keep {
			out.WriteString(line)
		}
	}
	return out.String()
}

// TestBuiltinActivates renders every built-in text with every section open and closed: Default
// skips that at run time because the embedded set cannot change after this test has passed.
func TestBuiltinActivates(t *testing.T) {
	if _, err := Load(Builtin(), nil); err != nil {
		t.Fatalf("the built-in prompt config does not activate:\n%v", err)
	}
	set, err := load(Builtin(), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.activate(); err != nil {
		t.Fatalf("the set Default loads does not activate:\n%v", err)
	}
}
