package session

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// maxInstructionBytes caps the project instructions in all; the nearest files keep their text
// first, since they are the most specific.
const maxInstructionBytes = 32 << 10

// instructionFile is one instruction file as it was read, to tell when it changes.
type instructionFile struct {
	Path  string    `json:"path"`
	Bytes int       `json:"bytes"`
	Cut   bool      `json:"truncated,omitempty"`
	mod   time.Time // zero for a file that was not there
	size  int64
	// base is the directory the file is read confined to (workspace.ReadConfined): the project
	// root for the project's files, the user's config directory for the user's own.
	base string
	// refused says why the file was not read (a link leading out of base); "" when it was.
	refused string
}

// instructions are the project instructions a session's system prompt holds: the user's own
// AGENTS.md, then AGENTS.md (else CLAUDE.md, else GEMINI.md) in each directory from the project
// root down to the session's cwd, the nearest last so it has the last word. They are data: the
// model reads them inside the system prompt, and nothing in them reaches settings or
// permissions.
type instructions struct {
	files []instructionFile
	// stat is the listing files were read from, refused files included, to tell a change.
	stat []instructionFile
	// refused are the files not read because they lead out of their base.
	refused []instructionFile
	system  string // the session's system prompt with them
	// tools is the tool variant the system prompt lists.
	tools *toolVariant
	// run is what they add to the system prompt's run values (the text tool-call protocol's
	// system prompt renders it again with its catalog).
	run prompts.Run
	// skills are the skills the system prompt lists (skills.go); problems the SKILL.md files
	// that were not loaded, one line each, told to the user when they change.
	skills   []tools.Skill
	problems string
	// agents are the subagent definitions (subagents.go); agentProblems the files not loaded.
	agents        []tools.AgentDef
	agentProblems string
}

// empty reports whether the instructions add nothing to the manager's system prompt.
func (in *instructions) empty() bool {
	return in == nil || (len(in.files) == 0 && len(in.skills) == 0 && len(listedAgents(in.agents)) == 0)
}

// candidateGroup is the alternatives of one directory (the first that exists is read), each
// read confined to base.
type candidateGroup struct {
	base  string
	paths []string
}

// instructionCandidates lists, in order, the files that may hold instructions for cwd, each
// group being the alternatives of one directory (the first that exists is read).
func instructionCandidates(cwd, userDir string) []candidateGroup {
	var groups []candidateGroup
	if userDir != "" {
		groups = append(groups, candidateGroup{userDir, []string{filepath.Join(userDir, "AGENTS.md")}})
	}
	root := projectRoot(cwd)
	var dirs []string
	for d := cwd; ; d = filepath.Dir(d) {
		dirs = append(dirs, d)
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(dirs)
	for _, d := range dirs {
		groups = append(groups, candidateGroup{root, []string{filepath.Join(d, "AGENTS.md"), filepath.Join(d, "CLAUDE.md"), filepath.Join(d, "GEMINI.md")}})
	}
	return groups
}

// projectRoot is the nearest directory at or above cwd holding .git, else cwd itself.
func projectRoot(cwd string) string {
	for d := cwd; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return cwd
		}
	}
}

// statInstructions finds the files that exist now, with their size and time, in order. A file
// that is a link leading out of its base (a cloned repository's AGENTS.md -> /proc/self/environ)
// is listed as refused and takes its directory's turn: the alternatives after it are not read
// in its place.
func statInstructions(groups []candidateGroup) []instructionFile {
	var out []instructionFile
	for _, g := range groups {
		for _, p := range g.paths {
			fi, err := workspace.StatConfined(g.base, p)
			if errors.Is(err, workspace.ErrOutsideRoots) {
				out = append(out, instructionFile{Path: p, base: g.base, refused: err.Error()})
				break
			}
			if err == nil && fi.Mode().IsRegular() {
				out = append(out, instructionFile{Path: p, mod: fi.ModTime(), size: fi.Size(), base: g.base})
				break
			}
		}
	}
	return out
}

func sameFiles(a, b []instructionFile) bool {
	return slices.EqualFunc(a, b, func(x, y instructionFile) bool {
		return x.Path == y.Path && x.mod.Equal(y.mod) && x.size == y.size && x.refused == y.refused
	})
}

// refusedFiles are the files of list that were not read, and why.
func refusedFiles(list []instructionFile) []instructionFile {
	var out []instructionFile
	for _, f := range list {
		if f.refused != "" {
			out = append(out, f)
		}
	}
	return out
}

// closingInstructions matches what could end the envelope instructions are shown in.
var closingInstructions = regexp.MustCompile(`(?i)</\s*instructions\b`)

// readInstructions reads the files, nearest first against the cap, and returns the run values
// for layout.system (INSTRUCTIONS, INSTRUCTIONS_CUT).
func readInstructions(all []instructionFile) ([]instructionFile, prompts.Run) {
	var files []instructionFile
	for _, f := range all {
		if f.refused == "" {
			files = append(files, f)
		}
	}
	texts := make([]string, len(files))
	budget := maxInstructionBytes
	cut := false
	for i := len(files) - 1; i >= 0; i-- {
		data, err := workspace.ReadConfined(files[i].base, files[i].Path, 0)
		if err != nil {
			continue
		}
		text := strings.TrimSpace(string(data))
		if len(text) > budget {
			text = clip.String(text, budget, "")
			files[i].Cut, cut = true, true
		}
		budget -= len(text)
		files[i].Bytes = len(text)
		texts[i] = closingInstructions.ReplaceAllStringFunc(text, func(m string) string { return "<\\/" + m[2:] })
	}
	var list []map[string]any
	for i, f := range files {
		if texts[i] != "" {
			list = append(list, map[string]any{"PATH": f.Path, "TEXT": texts[i]})
		}
	}
	return files, prompts.Run{"INSTRUCTIONS": list, "INSTRUCTIONS_CUT": cut}
}

// refreshInstructions reads the instruction files again when one appeared, changed or went,
// and reports whether they did. The system prompt changes only then, so provider caches hold
// across the turns in between.
func (s *Session) refreshInstructions() bool {
	files := statInstructions(instructionCandidates(s.roots.Cwd(), userConfigDir()))
	skills, probs := s.discoverSkills()
	problems := problemsText(probs)
	agents, aprobs := s.discoverAgents()
	agentProblems := problemsText(aprobs)
	s.mu.Lock()
	cur := s.instr
	s.mu.Unlock()
	tv := s.m.variant(s.settings())
	if cur != nil && sameFiles(cur.stat, files) && cur.tools == tv && sameSkills(cur.skills, skills) && sameAgents(cur.agents, agents) {
		s.mu.Lock()
		s.instr.problems, s.instr.agentProblems = problems, agentProblems
		s.mu.Unlock()
		if problems != cur.problems {
			s.noticeSkills(problems)
		}
		if agentProblems != cur.agentProblems {
			s.noticeAgents(agentProblems)
		}
		return false
	}
	stat := files
	refused := refusedFiles(stat)
	files, run := readInstructions(files)
	maps.Copy(run, skillsRun(skills))
	maps.Copy(run, agentsRun(agents))
	in := &instructions{files: files, stat: stat, refused: refused, tools: tv, run: run, skills: skills, problems: problems, agents: agents, agentProblems: agentProblems}
	if !in.empty() {
		// Without instruction files or skills systemPrompt is the manager's, built at the first
		// turn; rendering it here too loaded the prompt config at session/new, and the heap that
		// took (0.9 MB) stayed resident in a daemon that idles.
		in.system = s.m.systemWith(maps.Clone(run))
	}
	s.mu.Lock()
	s.instr = in
	s.mu.Unlock()
	if cur != nil && !sameFiles(cur.refused, refused) {
		// session/new tells of the first refusals itself, once its answer is out.
		s.noticeRefusedInstructions(refused)
	}
	// At session/new (cur nil) the caller tells the problems and the commands after its answer.
	if cur != nil && problems != cur.problems {
		s.noticeSkills(problems)
	}
	if cur != nil && agentProblems != cur.agentProblems {
		s.noticeAgents(agentProblems)
	}
	if cur != nil && !sameSkills(cur.skills, skills) {
		// The skills are in the / menu too.
		s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAvailableCommandsUpdate, AvailableCommands: s.availableCommands()})
	}
	return cur != nil || !in.empty()
}

// noticeRefusedInstructions tells the user which instruction files were not read because they
// are links leading out of the project (or of the user's config directory).
func (s *Session) noticeRefusedInstructions(refused []instructionFile) {
	if len(refused) == 0 {
		return
	}
	var lines []string
	for _, f := range refused {
		lines = append(lines, f.refused)
	}
	s.notice(protocol.SeverityWarning, "Instruction files not read", strings.Join(lines, "\n")+"\nA link out of the project is never followed; the model did not see these files.")
}

// instructionsRefused is the instruction files the session's last read refused.
func (s *Session) instructionsRefused() []instructionFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil {
		return nil
	}
	return slices.Clone(s.instr.refused)
}

// systemPrompt is the session's system prompt: the manager's, with its project instructions.
func (s *Session) systemPrompt() string {
	if s.parent != nil {
		return s.childSystem
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr.empty() {
		return s.m.system()
	}
	return s.instr.system
}

// instructionsRun is a copy of the run values the session's instructions add to the system
// prompt (empty without instructions).
func (s *Session) instructionsRun() prompts.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr.empty() {
		return prompts.Run{}
	}
	return maps.Clone(s.instr.run)
}

// instructionsMeta is what session/new reports of the instructions it loaded.
func (s *Session) instructionsMeta() []instructionFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil {
		return []instructionFile{}
	}
	return slices.Clone(s.instr.files)
}

// userConfigDir is $XDG_CONFIG_HOME/agentd (or the OS's config directory), where the user's own
// AGENTS.md lives.
func userConfigDir() string {
	d, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "agentd")
}

// noticeInstructions tells the user which instruction files the model reads.
func (s *Session) noticeInstructions(files []instructionFile) {
	if len(files) == 0 {
		return
	}
	var paths []string
	cut := false
	for _, f := range files {
		paths = append(paths, f.Path)
		cut = cut || f.Cut
	}
	desc := strings.Join(paths, "\n")
	if cut {
		desc += "\nThey were cut to 32 KB in all; the nearest files were kept first."
	}
	s.notice(protocol.SeverityInfo, "Project instructions loaded", desc)
}
