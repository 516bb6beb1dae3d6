package session

import (
	"context"
	"encoding/json"
	"io/fs"
	"iter"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// builtinMap is a copy of the built-in prompt config's files.
func builtinMap(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	fs.WalkDir(prompts.Builtin(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := fs.ReadFile(prompts.Builtin(), p)
			m[p] = &fstest.MapFile{Data: data}
		}
		return err
	})
	return m
}

// customSet is the built-in prompt config with one file's text replaced.
func customSet(t *testing.T, file, old, new string) *prompts.Set {
	t.Helper()
	m := builtinMap(t)
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
	// A member of a list argument is described from the config too.
	for _, sp := range toolSpecs(prompts.Default(), tools.Default()) {
		if sp.Name != "edit_file" {
			continue
		}
		var s struct {
			Properties struct {
				Edits struct {
					Items struct {
						Properties map[string]struct {
							Description string `json:"description"`
						} `json:"properties"`
					} `json:"items"`
				} `json:"edits"`
			} `json:"properties"`
		}
		json.Unmarshal(sp.Schema, &s)
		if got := s.Properties.Edits.Items.Properties["old_text"].Description; got != "Exact text to find (unique unless replace_all)" {
			t.Errorf("edits[].old_text description %q", got)
		}
	}
	// Every built-in tool, argument and member reaches the model described, from the config
	// alone: the tools themselves carry no text.
	for _, sp := range toolSpecs(prompts.Default(), tools.Default()) {
		if len(sp.Description) < 80 {
			t.Errorf("%s: description too short: %q", sp.Name, sp.Description)
		}
		for _, a := range schemaArgs(sp.Schema) {
			var schema map[string]any
			json.Unmarshal(sp.Schema, &schema)
			p := schemaMember(schema["properties"].(map[string]any), a)
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s.%s is sent without a description", sp.Name, a)
			}
		}
	}
	for _, tl := range tools.Default().List() {
		if tl.Description() != "" {
			t.Errorf("%s carries its own description; it belongs in tools.yml", tl.Name())
		}
	}
	// The system prompt shows a tool's first line: update_plan's must carry its rules alone.
	for _, tl := range toolList(prompts.Default(), tools.Default()) {
		if tl["NAME"] == "update_plan" {
			for _, want := range []string{"multi-step", "whole list", "exactly one entry in_progress"} {
				if !strings.Contains(tl["SUMMARY"].(string), want) {
					t.Errorf("update_plan's summary %q lacks %q", tl["SUMMARY"], want)
				}
			}
		}
	}
	// An entry for a tool, argument or member that does not exist is refused, and so is a tool,
	// argument or member with no entry.
	for _, c := range []struct{ old, new, want string }{
		{"  read_file:\n", "  read_files:\n    description: \"Nothing.\"\n  read_file:\n", "tools.read_files names no tool"},
		{"      start_line: \"First line", "      start_lines: \"First line", "tools.read_file.arguments.start_line is missing: every argument must be described\ntools.read_file.arguments.start_lines names no argument of read_file"},
		{"        replace_all: \"Replace every", "        replace_any: \"Replace every", "tools.edit_file.fields.edits.replace_all is missing: every argument must be described\ntools.edit_file.fields.edits.replace_any names no argument of edit_file"},
		{"  create_dir:\n    description:", "  create_dirs:\n    description:", "tools.create_dir is missing: every tool must be described\ntools.create_dirs names no tool"},
	} {
		m := builtinMap(t)
		src := string(m["tools.yml"].Data)
		if !strings.Contains(src, c.old) {
			t.Fatalf("tools.yml holds no %q", c.old)
		}
		m["tools.yml"] = &fstest.MapFile{Data: []byte(strings.Replace(src, c.old, c.new, 1))}
		_, err := prompts.Load(m, Catalog(tools.Default()))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q → %q: error %v, want %q", c.old, c.new, err, c.want)
		}
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

// liveOf is the live context a request carries: the last <context> reminder of its newest user
// message.
func liveOf(req *providers.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != providers.RoleUser {
			continue
		}
		for j := len(m.Parts) - 1; j >= 0; j-- {
			if t, ok := strings.CutPrefix(m.Parts[j].Text, "<context>\n"); ok {
				return t
			}
		}
		return ""
	}
	return ""
}

// TestCachedPrefixShare measures what share of the bytes of a 24-step task's requests is a
// prefix of the request before it (what a provider's prompt cache can reuse), with the live
// context in the system prompt (as it was) and as reminders in the newest user message (as it
// is). The context changes as a task goes: files get unsaved edits, diagnostics come and go,
// the minute turns. docs/benchmarks.md records the two numbers.
func TestCachedPrefixShare(t *testing.T) {
	set := prompts.Default()
	system := systemPrompt(set, tools.Default())
	specs, _ := json.Marshal(toolSpecs(set, tools.Default()))
	live := func(step int) string {
		run := prompts.Run{"MODE_ASK": true, "CWD": "/home/u/project", "CURRENT_TIME": "Tuesday 2026-12-01 16:0" + string(rune('0'+step/8)) + " UTC"}
		var dirty []string
		for i := 0; i < step/3; i++ {
			dirty = append(dirty, "/home/u/project/pkg/file"+string(rune('a'+i))+".go")
		}
		run["DIRTY_FILES"] = dirty
		if step%4 == 1 {
			run["DIAGNOSTICS"] = []map[string]any{{"PATH": "/home/u/project/pkg/a.go", "LINE": "12", "COLUMN": "3", "SEVERITY": "error", "MESSAGE": "undefined: x"}}
		}
		return set.Render("layout.context", run)
	}
	history := []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "Rename Config.Load to Config.Read across the project and fix the callers."}}}}
	var notes []contextNote
	var before, after [][]byte
	for step := range 24 {
		l := live(step)
		msgs, _ := json.Marshal(history)
		before = append(before, []byte(string(specs)+system+"\n\n"+l+string(msgs)))
		var placed []providers.Message
		placed, notes = placeContext(notes, history, l)
		msgs, _ = json.Marshal(placed)
		after = append(after, []byte(string(specs)+system+string(msgs)))
		args := `{"path":"/home/u/project/pkg/file.go","old_text":"Load(","new_text":"Read("}`
		history = append(history,
			providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartText, Text: "Next I change the callers in pkg."}, {Type: providers.PartToolCall, ToolCallID: "c" + string(rune('A'+step)), ToolName: "edit_file", Args: json.RawMessage(args)}}},
			providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartToolResult, ToolCallID: "c" + string(rune('A'+step)), Text: strings.Repeat("edited line of the result\n", 40)}}})
	}
	share := func(reqs [][]byte) float64 {
		var hit, total int
		for i, r := range reqs {
			total += len(r)
			if i > 0 {
				p := reqs[i-1]
				n := 0
				for n < len(p) && n < len(r) && p[n] == r[n] {
					n++
				}
				hit += n
			}
		}
		return float64(hit) / float64(total)
	}
	b, a := share(before), share(after)
	t.Logf("cached-prefix share of request bytes over 24 steps: context in the system prompt %.1f%%, in the newest user message %.1f%%", 100*b, 100*a)
	if a <= b || a < 0.9 {
		t.Fatalf("placing the context as reminders did not raise the cached share: before %.3f, after %.3f", b, a)
	}
}

// asideRecorder records the model requests made without tools (titles, summaries).
type asideRecorder struct {
	providers.Provider
	mu   *sync.Mutex
	reqs *[]providers.Request
}

func (a asideRecorder) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	if len(req.Tools) == 0 {
		a.mu.Lock()
		*a.reqs = append(*a.reqs, *req)
		a.mu.Unlock()
	}
	return a.Provider.Stream(ctx, req)
}

// TestChatTitle is the seed's ChatTitleTest: the request that names a chat is the config's
// chat_title texts, with the user's first prompt inserted verbatim.
func TestChatTitle(t *testing.T) {
	h := newHarness(t, reply{events: textReply("hello")})
	_ = h.m.Shutdown(context.Background())
	var mu sync.Mutex
	var asides []providers.Request
	m := NewManager(Deps{
		Client:     h.client,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return h.ws },
		Providers:  fakeSource{p: asideRecorder{h.prov, &mu, &asides}},
		Tools:      tools.NewRegistry(readTool{}),
		Settings:   func() config.Settings { return h.set },
		StateDir:   h.state,
		Prompts:    customSet(t, "tasks.yml", "    Name this request:\n", "    Nenne diese Bitte:\n"),
	})
	h.m = m
	h.newSession()
	h.prompt("fix {{IDENTITY}} please")
	h.client.waitFor(t, "title", func(us []protocol.SessionUpdate) bool { return len(kinds(us, protocol.UpdateSessionInfoUpdate)) == 1 })
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asides) != 1 {
		t.Fatalf("%d title requests", len(asides))
	}
	req := asides[0]
	if !strings.HasPrefix(req.System, "You name coding conversations") {
		t.Errorf("system %q", req.System)
	}
	if got := req.Messages[0].Parts[0].Text; !strings.HasPrefix(got, "Nenne diese Bitte:\n\nfix {{IDENTITY}} please") {
		t.Errorf("title request %q", got)
	}
}

// TestToolListRendersDescriptionsAlone pins that the system prompt's tool list renders each
// tool's description and not its arguments' texts too: the first turn of a process builds it
// beside toolSpecs, which renders those, and the two used to render every argument twice.
func TestToolListRendersDescriptionsAlone(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are the race detector's under -race")
	}
	set, reg := prompts.Default(), tools.Default()
	list := testing.AllocsPerRun(10, func() { toolList(set, reg) })
	whole := testing.AllocsPerRun(10, func() {
		for _, tl := range reg.List() {
			set.Tool(tl.Name())
		}
	})
	t.Logf("toolList: %.0f allocations; rendering every tool's whole entry: %.0f", list, whole)
	if list >= whole {
		t.Errorf("toolList made %.0f allocations, not fewer than the %.0f that rendering every tool's whole entry makes", list, whole)
	}
}
