package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ExploreAgentName is the built-in subagent the agent tool runs when the model names none.
const ExploreAgentName = "explore"

// maxAgentsListed bounds the definitions one discovery keeps.
const maxAgentsListed = 100

// AgentDef is one subagent definition: a Markdown file whose front matter names it and says which
// tools its child conversation may use (and, optionally, which model answers it), and whose body
// is the child's system text.
type AgentDef struct {
	Name        string
	Description string
	// Tools are the tool names the child may use; nil is every tool of its parent (less agent).
	// ReadOnly keeps only the parent's read tools (the built-in explore).
	Tools    []string
	ReadOnly bool
	// Model is a provider id of the user's settings, or "fast" (models.fast); "" is the parent's.
	Model string
	// System is the child's system text.
	System string
	// Path is the definition's file ("" for the built-in); Project is set for one found under a
	// workspace root, Root then being that root.
	Path    string
	Project bool
	Root    string
}

// exploreSystem is the built-in explore agent's system text.
const exploreSystem = `You are explore, a subagent that answers one question about a software project by searching and reading it. You have read-only tools: you cannot change files or run programs. Look for what the task asks, read what you need, and stop as soon as you can answer. Your final message is all the agent that started you will see: make it a complete, self-contained answer with the paths (and line numbers) of what you found, and say plainly what you could not find.`

// ExploreAgent is the built-in explore definition: read tools only.
func ExploreAgent() AgentDef {
	return AgentDef{Name: ExploreAgentName, Description: "Searches and reads the project to answer a question; read tools only, changes nothing.", ReadOnly: true, System: exploreSystem}
}

// AgentDirs lists where definitions are looked for, in order (the first of a name wins): the
// user's <configDir>/agents, then <root>/.agentd/agents of each workspace root. Empty configDir is
// skipped.
func AgentDirs(roots []string, configDir string) []SkillDir {
	var out []SkillDir
	if configDir != "" {
		out = append(out, SkillDir{Base: configDir, Rel: "agents"})
	}
	for _, r := range roots {
		out = append(out, SkillDir{Base: r, Rel: ".agentd/agents", Project: true})
	}
	return out
}

// DiscoverAgents reads every <dir>/<name>.md of dirs, each confined to its base: a link that leads
// out of it is refused, a file with bad front matter is a problem naming the file and the key. The
// user's definitions come first, then the built-in explore, then the project's, so a cloned
// repository cannot replace either. known says whether a tool name exists.
func DiscoverAgents(dirs []SkillDir, known func(string) bool) ([]AgentDef, []SkillProblem) {
	var defs []AgentDef
	var problems []SkillProblem
	seen := map[string]bool{}
	add := func(d AgentDef) {
		if seen[d.Name] || len(defs) >= maxAgentsListed {
			return
		}
		seen[d.Name] = true
		defs = append(defs, d)
	}
	builtin := false
	for _, d := range dirs {
		if d.Project && !builtin {
			add(ExploreAgent())
			builtin = true
		}
		found, probs := agentsIn(d, known)
		problems = append(problems, probs...)
		for _, a := range found {
			add(a)
		}
	}
	if !builtin {
		add(ExploreAgent())
	}
	return defs, problems
}

func agentsIn(d SkillDir, known func(string) bool) ([]AgentDef, []SkillProblem) {
	root, entries, problems := openDir(d)
	if root == nil {
		return nil, problems
	}
	defer root.Close()
	var defs []AgentDef
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || e.IsDir() {
			continue
		}
		file := path.Join(d.Rel, e.Name())
		abs := filepath.Join(d.Base, filepath.FromSlash(file))
		data, err := readInRoot(root, file)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				problems = append(problems, SkillProblem{Path: abs, Reason: refusal(err, d.Base)})
			}
			continue
		}
		def, prob := ParseAgent(data, name, known)
		if prob != nil {
			prob.Path = abs
			problems = append(problems, *prob)
			continue
		}
		def.Path, def.Project = abs, d.Project
		if d.Project {
			def.Root = d.Base
		}
		defs = append(defs, def)
	}
	return defs, problems
}

var knownAgentKeys = []string{"name", "description", "tools", "model"}

// ParseAgent checks a definition strictly: name (the file's name, in the skills' spelling) and
// description are required strings, tools a list of tool names that exist (never agent: a child
// does not start children), model a string; the body is the system text and may not be empty.
func ParseAgent(data []byte, file string, known func(string) bool) (AgentDef, *SkillProblem) {
	vals, body, prob := readFrontMatter(data, knownAgentKeys, "name and description")
	if prob != nil {
		return AgentDef{}, prob
	}
	var d AgentDef
	if d.Name, prob = frontString(vals, "name", true); prob != nil {
		return AgentDef{}, prob
	}
	if !skillName(d.Name) {
		return AgentDef{}, &SkillProblem{Key: "name", Reason: "must be at most 64 lowercase letters, digits and single hyphens"}
	}
	if d.Name != file {
		return AgentDef{}, &SkillProblem{Key: "name", Reason: fmt.Sprintf("%q must be the file's name %q (without .md)", d.Name, file)}
	}
	if d.Description, prob = frontString(vals, "description", true); prob != nil {
		return AgentDef{}, prob
	}
	if len(d.Description) > maxSkillDescription {
		return AgentDef{}, &SkillProblem{Key: "description", Reason: fmt.Sprintf("is longer than %d characters", maxSkillDescription)}
	}
	if d.Model, prob = frontString(vals, "model", false); prob != nil {
		return AgentDef{}, prob
	}
	if v, ok := vals["tools"]; ok {
		if v.Kind != yaml.SequenceNode {
			return AgentDef{}, &SkillProblem{Key: "tools", Reason: fmt.Sprintf("must be a list of tool names (line %d)", v.Line)}
		}
		d.Tools = []string{}
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
				return AgentDef{}, &SkillProblem{Key: "tools", Reason: fmt.Sprintf("must be a list of tool names (line %d)", item.Line)}
			}
			name := strings.TrimSpace(item.Value)
			switch {
			case name == AgentTool.Name():
				return AgentDef{}, &SkillProblem{Key: "tools", Reason: fmt.Sprintf("a subagent cannot have the agent tool (line %d)", item.Line)}
			case known != nil && !known(name):
				return AgentDef{}, &SkillProblem{Key: "tools", Reason: fmt.Sprintf("no tool named %q (line %d)", name, item.Line)}
			}
			if !slices.Contains(d.Tools, name) {
				d.Tools = append(d.Tools, name)
			}
		}
	}
	d.System = strings.TrimSpace(string(body))
	if d.System == "" {
		return AgentDef{}, &SkillProblem{Reason: "the body (the subagent's system text, after the front matter) is empty"}
	}
	return d, nil
}

// Allows reports whether the definition lets its child use a tool of the given name and effect.
func (d AgentDef) Allows(name string, effect Effect) bool {
	if name == AgentTool.Name() {
		return false
	}
	if d.ReadOnly && effect != EffectRead {
		return false
	}
	return d.Tools == nil || slices.Contains(d.Tools, name)
}
