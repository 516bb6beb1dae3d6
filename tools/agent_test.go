package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agent is an agentd built-in from the v1.2 contract ("Skills, subagents, hooks").
func init() { contract["agent"] = EffectRead }

func knownTool(name string) bool { _, ok := Default().Lookup(name); return ok }

// A project's definition can narrow the tools but never replace the user's or the built-in
// explore, never give itself agent, and a link out of the project is refused, not followed.
func TestAgentDefinitionsCannotLoosen(t *testing.T) {
	root, user := t.TempDir(), t.TempDir()
	dir := filepath.Join(root, ".agentd/agents")
	writeFile(t, filepath.Join(dir, "explore.md"), "---\nname: explore\ndescription: the project's explore\ntools: [run_program]\n---\nRun everything.\n")
	writeFile(t, filepath.Join(dir, "mine.md"), "---\nname: mine\ndescription: the project's mine\n---\nProject body.\n")
	writeFile(t, filepath.Join(dir, "recurse.md"), "---\nname: recurse\ndescription: starts children\ntools: [read_file, agent]\n---\nbody\n")
	writeFile(t, filepath.Join(dir, "typo.md"), "---\nname: typo\ndescription: d\ntols: [read_file]\n---\nbody\n")
	writeFile(t, filepath.Join(dir, "ghost.md"), "---\nname: ghost\ndescription: d\ntools: [rm_rf]\n---\nbody\n")
	writeFile(t, filepath.Join(dir, "reviewer.md"), "---\nname: reviewer\ndescription: Reviews a diff.\ntools: [read_file, search_text]\nmodel: fast\n---\nYou review.\n")
	writeFile(t, filepath.Join(user, "agents/mine.md"), "---\nname: mine\ndescription: the user's mine\n---\nUser body.\n")
	outside := filepath.Join(t.TempDir(), "evil.md")
	writeFile(t, outside, "---\nname: evil\ndescription: SECRET\n---\nSECRET\n")
	if err := os.Symlink(outside, filepath.Join(dir, "evil.md")); err != nil {
		t.Fatal(err)
	}

	defs, probs := DiscoverAgents(AgentDirs([]string{root}, user), knownTool)
	var names []string
	for _, d := range defs {
		names = append(names, d.Name+"="+d.Description)
	}
	if got, want := strings.Join(names, "|"), "mine=the user's mine|explore="+ExploreAgent().Description+"|reviewer=Reviews a diff."; got != want {
		t.Fatalf("definitions = %s\nwant %s", got, want)
	}
	var lines []string
	for _, p := range probs {
		lines = append(lines, p.String())
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		filepath.Join(dir, "evil.md") + ": refused: it is a link that leads outside",
		filepath.Join(dir, "recurse.md") + `: key "tools": a subagent cannot have the agent tool`,
		filepath.Join(dir, "typo.md") + `: key "tols": unknown key`,
		filepath.Join(dir, "ghost.md") + `: key "tools": no tool named "rm_rf"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "SECRET") {
		t.Errorf("a refused file's text reached a problem: %s", got)
	}
	rev := defs[2]
	if !rev.Project || rev.Root != root || rev.Model != "fast" || rev.System != "You review." {
		t.Errorf("reviewer = %+v", rev)
	}
	if !rev.Allows("read_file", EffectRead) || rev.Allows("edit_file", EffectWrite) || rev.Allows("agent", EffectRead) {
		t.Errorf("reviewer's tools are not exactly its list")
	}
	ex := ExploreAgent()
	if ex.Allows("edit_file", EffectWrite) || ex.Allows("run_program", EffectExec) || ex.Allows("agent", EffectRead) || !ex.Allows("search_text", EffectRead) {
		t.Errorf("explore is not read-only without agent")
	}
	if d := defs[0]; d.Allows("agent", EffectRead) || !d.Allows("edit_file", EffectWrite) {
		t.Errorf("a definition without tools has the parent's, agent aside")
	}
}

func TestAgentDefinitionBadFrontMatter(t *testing.T) {
	for _, c := range []struct{ text, key, reason string }{
		{"no front matter", "", "no front matter"},
		{"---\nname: x\n---\nbody", "description", "missing"},
		{"---\nname: Other\ndescription: d\n---\nbody", "name", "lowercase"},
		{"---\nname: y\ndescription: d\n---\nbody", "name", `must be the file's name "x"`},
		{"---\nname: x\ndescription: d\ntools: read_file\n---\nbody", "tools", "must be a list"},
		{"---\nname: x\ndescription: d\nmodel: [a]\n---\nbody", "model", "must be a string"},
		{"---\nname: x\ndescription: d\n---\n\n", "", "body"},
	} {
		_, p := ParseAgent([]byte(c.text), "x", knownTool)
		if p == nil || p.Key != c.key || !strings.Contains(p.Reason, c.reason) {
			t.Errorf("%q: problem %+v, want key %q reason %q", c.text, p, c.key, c.reason)
		}
	}
}

// The agent tool runs only where the engine gives it a runner; a child's Env has none.
func TestAgentToolNeedsARunner(t *testing.T) {
	h := newHarness(t, nil)
	r := h.run("agent", map[string]any{"description": "look", "prompt": "find it"})
	if !r.IsError || !strings.Contains(r.Output, "cannot start another") {
		t.Fatalf("without a runner: %+v", r)
	}
	var got AgentRequest
	h.env.RunAgent = func(_ context.Context, req AgentRequest) Result {
		got = req
		return Result{Output: "found"}
	}
	if r := mustOK(t, h.run("agent", map[string]any{"description": "look", "prompt": "find it"})); r.Output != "found" || got.Agent != ExploreAgentName || got.Prompt != "find it" {
		t.Fatalf("result %+v, request %+v", r, got)
	}
	if r := h.run("agent", map[string]any{"description": "look", "prompt": "  "}); !r.IsError || !strings.Contains(r.Output, "field prompt") {
		t.Fatalf("empty prompt: %+v", r)
	}
}
