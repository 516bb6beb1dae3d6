// Package prompts owns every text the model reads: the identity, the rules, the tools' and their
// arguments' descriptions, the per-turn context lines, the loop's and the approvals' messages,
// the chat-title and compaction prompts, and the layouts that place them. They are YAML files
// (agent.yml and the files it includes), loaded strictly and rendered by a small Mustache subset,
// so that changing the tone, adding a rule or translating the prompt is editing files alone
// (docs/prompts.md). The built-in set is embedded in the binary; a user's set replaces it whole.
//
// The package is a leaf: it knows no tool, session or provider. The caller hands it the tool
// catalog to check the tool entries against and the run values to render with.
package prompts

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

//go:embed builtin/*.yml
var builtinFiles embed.FS

// Builtin is the embedded set: what ships, and what `agentd prompts export` writes.
func Builtin() fs.FS {
	sub, err := fs.Sub(builtinFiles, "builtin")
	if err != nil {
		panic(err)
	}
	return sub
}

// Set is a loaded, checked prompt config. It is read-only and safe for concurrent use.
type Set struct {
	names map[string]any            // upper-case names of every config value
	texts map[string]*template      // dotted path → text, for the texts code renders alone
	tools map[string]map[string]any // tool → {description, arguments}
}

// Run holds the values of one rendering (CURRENT_TIME, TOOLS, …), keyed by upper-case name. A
// string is inserted as it is, never read as a template; a list is a []string or a
// []map[string]any; a bool opens a section or not. A declared name left out reads as empty.
type Run map[string]any

// runNames declares every run value a text may name, each with a full sample: activation
// renders every text with these (every section opened) and with none (every section closed).
var runNames = sync.OnceValue(func() map[string]any {
	return map[string]any{
		"TOOLS":        []map[string]any{{"NAME": "read_file", "EFFECT": "read", "SUMMARY": "Read a file.", "DESCRIPTION": "Read a file.", "SCHEMA": `{"type":"object"}`}, {"NAME": "edit_file", "EFFECT": "write", "SUMMARY": "Edit.", "DESCRIPTION": "Edit.", "SCHEMA": `{"type":"object"}`}},
		"TEXT_TOOLS":   true,
		"RESULTS":      []map[string]any{{"NAME": "read_file", "OUTPUT": "1\tpackage main", "IS_ERROR": false}, {"NAME": "edit_file", "OUTPUT": "Error: stale", "IS_ERROR": true}},
		"CURRENT_TIME": "2026-12-01 16:00 UTC",
		"CURRENT_FILE": "/p/main.go",
		// Editor context (session/editorctx.go): the active file, the selection, the other open
		// files inside and outside the roots, the build manifests found.
		"CURRENT_FILE_OUTSIDE": true,
		"SELECTION":            map[string]any{"PATH": "/p/main.go", "START_LINE": "3", "END_LINE": "5", "TEXT": "func main() {}", "CUT": true, "OUTSIDE": true},
		"OTHER_FILES":          []string{"/p/a.go", "/p/b.go"},
		"OUTSIDE_FILES":        []string{"/etc/hosts"},
		"MORE_OPEN_FILES":      "4",
		"MODULES":              []map[string]any{{"PATH": "/p/go.mod", "KIND": "go", "NAME": "example.com/p"}, {"PATH": "/p/web/package.json", "KIND": "npm", "NAME": ""}},
		"MORE_MODULES":         "2",
		"CWD":                  "/p",
		"OTHER_ROOTS":          []string{"/q", "/r"},
		"MODE_AUTO":            true,
		"MODE_ASK":             true,
		"MODE_PLAN":            true,
		"DIRTY_FILES":          []string{"/p/a.go", "/p/b.go"},
		"DIAGNOSTICS":          []map[string]any{{"PATH": "/p/a.go", "LINE": "3", "COLUMN": "1", "SEVERITY": "error", "MESSAGE": "undefined: x"}, {"PATH": "/p/b.go", "LINE": "9", "COLUMN": "2", "SEVERITY": "warning", "MESSAGE": "unused"}},
		"MORE_DIAGNOSTICS":     "3",
		"TOOL":                 "read_file",
		"ERROR":                "boom",
		"OPTION":               "maybe",
		"SUMMARY":              "We fixed the parser.",
		"REQUEST":              "Fix the build.",
		"QUERY":                "latest stable Go release",
		"INSTRUCTION":          "Use a map instead of a switch.",
		"INSTRUCTIONS":         []map[string]any{{"PATH": "/home/u/.config/agentd/AGENTS.md", "TEXT": "Answer in English."}, {"PATH": "/p/AGENTS.md", "TEXT": "Run make test."}},
		"INSTRUCTIONS_CUT":     true,
		"RESTORE_PROMPT":       "Use a map in the parser.",
		"RESTORED_FILES":       []map[string]any{{"PATH": "/p/b.go", "REASON": "changed since agentd's edit"}, {"PATH": "/p/a.go", "REASON": ""}},
		"USER_CHANGED_FILES":   []map[string]any{{"PATH": "/p/a.go", "DIFF": "@@ -3 +3 @@\n-x := 1\n+x := 2", "DELETED": false}, {"PATH": "/p/b.go", "DIFF": "", "DELETED": true}},
		"REASON":               "go vet failed: main.go:3: unused variable x",
		"SKILL":                "release-notes",
		"SKILLS":               []map[string]any{{"NAME": "release-notes", "DESCRIPTION": "Write release notes from the git log."}},
		"SKILLS_MORE":          "2",
		"AGENTS":               []map[string]any{{"NAME": "reviewer", "DESCRIPTION": "Reviews a diff."}},
		"TOOL_NAMES":           "read_file, edit_file",
		"MAX_BYTES":            "16777216",
		"FILES":                "/p/a.go, /p/b.go",
		"MAX_TOKENS":           "8192",
		"CALLS_CUT":            true,
		"ANSWER":               "Call `strings.Cut(s, \",\")`.",
		"EVIDENCE":             []map[string]any{{"TOOL": "read_file", "OUTPUT": "1\tpackage main"}, {"TOOL": "search_text", "OUTPUT": "main.go:1: package main"}}}
})

// Load reads agent.yml and its includes from fsys, checks them against the schema and, when cat
// is not nil, the tool entries against the real tools, and renders every text against runs that
// open and close every section. Any failure is returned whole; no half-checked set is.
func Load(fsys fs.FS, cat Catalog) (*Set, error) {
	return load(fsys, cat, true)
}

// load is Load, with activation optional: the built-in set is fixed when the binary is built,
// and TestBuiltinActivates activates it (through Load), so Default skips the
// two renderings of every text (a quarter of the load's allocations, 150 KB that no GC has
// reclaimed by the time a session idles).
func load(fsys fs.FS, cat Catalog, activate bool) (*Set, error) {
	raw, err := loadFS(fsys)
	if err != nil {
		return nil, err
	}
	s := &Set{names: map[string]any{}, texts: map[string]*template{}, tools: map[string]map[string]any{}}
	for k, v := range raw {
		if k == "schema_version" || k == "include" {
			continue
		}
		// The tools' entries reach the templates through the run's TOOLS list, which carries
		// each tool's description; exposing them as names too would clash with it.
		if k != "tools" {
			s.expose(k, v, s.names)
		}
		s.index(k, v)
	}
	for name := range s.names {
		if _, clash := runNames()[name]; clash {
			return nil, fmt.Errorf("the config's %s clashes with the run value of that name; rename the key", name)
		}
	}
	if tl, ok := raw["tools"].(map[string]any); ok {
		for name, v := range tl {
			s.tools[name] = v.(map[string]any)
		}
	}
	if cat != nil {
		if err := s.checkTools(cat); err != nil {
			return nil, err
		}
	}
	if activate {
		if err := s.activate(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// LoadDir loads the set in dir (a user's `$XDG_CONFIG_HOME/agentd/prompts`) through an os.Root
// of dir: a file there that is a link leading out of it (which a program agentd ran could plant)
// is refused, so its target never becomes prompt text; a link inside dir still works.
func LoadDir(dir string, cat Catalog) (*Set, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("prompt config %s: %w", dir, err)
	}
	defer r.Close()
	s, err := Load(r.FS(), cat)
	if err != nil {
		return nil, fmt.Errorf("prompt config %s: %w", dir, err)
	}
	return s, nil
}

// builtinOnce is the built-in set, parsed at the first call.
func builtinOnce() (*Set, error) {
	builtin.once.Do(func() {
		builtinLoaded.Store(true)
		builtin.set, builtin.err = load(Builtin(), nil, false)
	})
	return builtin.set, builtin.err
}

// builtin holds builtinOnce's result: a zero sync.Once costs the package's init nothing, where a
// package-level sync.OnceValues is a call at every start.
var builtin struct {
	once sync.Once
	set  *Set
	err  error
}

var builtinLoaded atomic.Bool

// BuiltinLoaded reports whether the built-in set has been parsed in this process: start-up must
// not do it (the first request does), which a test of the daemon checks.
func BuiltinLoaded() bool { return builtinLoaded.Load() }

// Default is the built-in set, loaded on first use. The built-in set is checked against the real
// tools and activated by a test, so Default does neither again.
func Default() *Set {
	s, err := builtinOnce()
	if err != nil {
		panic("prompts: the built-in set is broken: " + err.Error())
	}
	return s
}

// UserDir is where a user's set lives: $XDG_CONFIG_HOME/agentd/prompts (or the OS's config
// directory).
func UserDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "agentd", "prompts")
}

// UserSetExists reports whether the user has a set (UserDir holds an agent.yml); when they do,
// it replaces the built-in set whole, and a broken one is an error, never a fallback.
func UserSetExists() bool {
	dir := UserDir()
	if dir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "agent.yml"))
	return !errors.Is(err, fs.ErrNotExist)
}

// Export writes the built-in set into dir, refusing to overwrite a file.
func Export(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(Builtin(), ".")
	if err != nil {
		return nil, err
	}
	var wrote []string
	for _, e := range entries {
		data, err := fs.ReadFile(Builtin(), e.Name())
		if err != nil {
			return wrote, err
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return wrote, err
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return wrote, err
		}
		wrote = append(wrote, p)
	}
	return wrote, nil
}

// upper turns a YAML path piece into its template name: rules → RULES, mode_auto → MODE_AUTO.
func upper(s string) string { return strings.ToUpper(strings.ReplaceAll(s, ".", "_")) }

// expose adds the names of value v at path into names: a text or a list by its own name, and a
// map's members flattened as PATH_KEY (the map itself also opens a section of its members).
func (s *Set) expose(path string, v any, names map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		scope := map[string]any{}
		for k, sub := range v {
			s.expose(k, sub, scope)
			s.expose(path+"_"+k, sub, names)
		}
		names[upper(path)] = scope
	case []any:
		items := make([]any, len(v))
		for i, e := range v {
			if m, ok := e.(map[string]any); ok {
				scope := map[string]any{}
				for k, sub := range m {
					s.expose(k, sub, scope)
				}
				items[i] = scope
			} else {
				items[i] = e
			}
		}
		names[upper(path)] = items
	default:
		names[upper(path)] = v
	}
}

// index records every text by its dotted path, for Text.
func (s *Set) index(path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			s.index(path+"."+k, sub)
		}
	case *template:
		s.texts[path] = v
	}
}

func (s *Set) checkTools(cat Catalog) error {
	var errs []error
	for name, args := range cat {
		if _, ok := s.tools[name]; !ok {
			errs = append(errs, fmt.Errorf("tools.%s is missing: every tool must be described", name))
			continue
		}
		described := s.argTexts(name)
		for _, a := range args {
			if _, ok := described[a]; !ok {
				errs = append(errs, fmt.Errorf("tools.%s is missing: every argument must be described", argPath(name, a)))
			}
		}
		for a := range described {
			if !slices.Contains(args, a) {
				errs = append(errs, fmt.Errorf("tools.%s names no argument of %s", argPath(name, a), name))
			}
		}
	}
	for name := range s.tools {
		if _, ok := cat[name]; !ok {
			errs = append(errs, fmt.Errorf("tools.%s names no tool", name))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// argPath is where the config describes a tool's argument: NAME.arguments.ARG, or, for a member
// of an argument, NAME.fields.ARG.MEMBER.
func argPath(tool, arg string) string {
	if strings.Contains(arg, ".") {
		return tool + ".fields." + arg
	}
	return tool + ".arguments." + arg
}

// argTexts are a tool entry's argument texts keyed as the Catalog names them.
func (s *Set) argTexts(name string) map[string]*template {
	e := s.tools[name]
	out := map[string]*template{}
	if m, ok := e["arguments"].(map[string]any); ok {
		for a, t := range m {
			out[a] = t.(*template)
		}
	}
	if m, ok := e["fields"].(map[string]any); ok {
		for a, sub := range m {
			for f, t := range sub.(map[string]any) {
				out[a+"."+f] = t.(*template)
			}
		}
	}
	return out
}

// activate renders every text twice: with every run value set (every section opens) and with
// none (every section stays closed), so an unknown name or a misplaced section fails now and
// not in the middle of a turn.
func (s *Set) activate() error {
	full := Run(runNames())
	paths := make([]string, 0, len(s.texts))
	for p := range s.texts {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var errs []error
	for _, run := range []Run{full, {}} {
		if len(errs) > 0 {
			break // the same fault would be reported twice
		}
		for _, p := range paths {
			if _, err := s.render(s.texts[p], run); err != nil {
				errs = append(errs, err)
			}
		}
		for _, it := range s.names["RULES"].([]any) {
			for _, t := range it.(map[string]any)["ITEMS"].([]any) {
				if _, err := s.render(t.(*template), run); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (s *Set) render(t *template, run Run) (string, error) {
	var b strings.Builder
	b.Grow(2 * len(t.src))
	r := renderer{b: &b, stack: []scope{{names: s.names}, {names: run}}, known: known()}
	if err := r.render(t); err != nil {
		return "", err
	}
	return b.String(), nil
}

// known is the set of runNames, made at first use like it.
var known = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for k := range runNames() {
		m[k] = true
	}
	return m
})

// Render renders the text at a dotted path ("layout.system", "loop.cancelled") with run. A
// checked set fails here only for a path no schema key has, which is a bug in the caller.
func (s *Set) Render(path string, run Run) string {
	t, ok := s.texts[path]
	if !ok {
		panic("prompts: no text at " + path)
	}
	for k := range run {
		if !known()[k] {
			panic("prompts: undeclared run value " + k)
		}
	}
	out, err := s.render(t, run)
	if err != nil {
		// Activation rendered every text with every name declared, so this is a bug.
		panic("prompts: " + err.Error())
	}
	return out
}

// ToolDescription returns a tool's description alone, rendered: the system prompt's tool list
// needs no more, and rendering every argument's text for it too doubled the first turn's
// rendering of the catalog (toolSpecs renders them for the schemas).
func (s *Set) ToolDescription(name string) (string, bool) {
	e, ok := s.tools[name]
	if !ok {
		return "", false
	}
	desc, err := s.render(e["description"].(*template), nil)
	if err != nil {
		panic("prompts: " + err.Error())
	}
	return desc, true
}

// Tool returns a tool's description and its arguments' descriptions, rendered; a member of an
// argument is keyed ARGUMENT.MEMBER, as in the Catalog.
func (s *Set) Tool(name string) (desc string, args map[string]string, ok bool) {
	desc, ok = s.ToolDescription(name)
	if !ok {
		return "", nil, false
	}
	args = map[string]string{}
	for a, t := range s.argTexts(name) {
		args[a], _ = s.render(t, nil)
	}
	return desc, args, true
}
