package session

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/internal/lazy"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/rpc/protocol"
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
}

// MarshalJSON writes what encoding/json writes for the tagged fields, by hand: session/new's
// answer carries a (usually empty) list of these, and encoding/json would build and keep an
// encoder for the type to write it.
func (f instructionFile) MarshalJSON() ([]byte, error) {
	dst := append(make([]byte, 0, 64), `{"path":`...)
	dst = protocol.AppendJSONString(dst, f.Path)
	dst = append(dst, `,"bytes":`...)
	dst = strconv.AppendInt(dst, int64(f.Bytes), 10)
	if f.Cut {
		dst = append(dst, `,"truncated":true`...)
	}
	return append(dst, '}'), nil
}

// instructions are the project instructions a session's system prompt holds: the user's own
// AGENTS.md, then AGENTS.md (else CLAUDE.md, else GEMINI.md) in each directory from the project
// root down to the session's cwd, the nearest last so it has the last word. They are data: the
// model reads them inside the system prompt, and nothing in them reaches settings or
// permissions.
type instructions struct {
	files  []instructionFile
	system string // the session's system prompt with them
	// tools is the tool variant the system prompt lists.
	tools *toolVariant
	// run is what they add to the system prompt's run values (the text tool-call protocol's
	// system prompt renders it again with its catalog).
	run prompts.Run
}

// instructionCandidates lists, in order, the files that may hold instructions for cwd, each
// group being the alternatives of one directory (the first that exists is read).
func instructionCandidates(cwd, userDir string) [][]string {
	var groups [][]string
	if userDir != "" {
		groups = append(groups, []string{filepath.Join(userDir, "AGENTS.md")})
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
		groups = append(groups, []string{filepath.Join(d, "AGENTS.md"), filepath.Join(d, "CLAUDE.md"), filepath.Join(d, "GEMINI.md")})
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

// statInstructions finds the files that exist now, with their size and time, in order.
func statInstructions(groups [][]string) []instructionFile {
	var out []instructionFile
	for _, g := range groups {
		for _, p := range g {
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
				out = append(out, instructionFile{Path: p, mod: fi.ModTime(), size: fi.Size()})
				break
			}
		}
	}
	return out
}

func sameFiles(a, b []instructionFile) bool {
	return slices.EqualFunc(a, b, func(x, y instructionFile) bool {
		return x.Path == y.Path && x.mod.Equal(y.mod) && x.size == y.size
	})
}

// closingInstructions matches what could end the envelope instructions are shown in.
func closingInstructions() *regexp.Regexp {
	return lazyClosingInstructions.Get(func() *regexp.Regexp { return regexp.MustCompile(`(?i)</\s*instructions\b`) })
}

var lazyClosingInstructions lazy.Value[*regexp.Regexp]

// readInstructions reads the files, nearest first against the cap, and returns the run values
// for layout.system (INSTRUCTIONS, INSTRUCTIONS_CUT).
func readInstructions(files []instructionFile) ([]instructionFile, prompts.Run) {
	texts := make([]string, len(files))
	budget := maxInstructionBytes
	cut := false
	for i := len(files) - 1; i >= 0; i-- {
		data, err := os.ReadFile(files[i].Path)
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
		texts[i] = closingInstructions().ReplaceAllStringFunc(text, func(m string) string { return "<\\/" + m[2:] })
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
	s.mu.Lock()
	cur := s.instr
	s.mu.Unlock()
	tv := s.m.variant(s.settings())
	if cur != nil && sameFiles(cur.files, files) && cur.tools == tv {
		return false
	}
	files, run := readInstructions(files)
	in := &instructions{files: files, tools: tv, run: run}
	if len(files) > 0 {
		// Without instruction files systemPrompt is the manager's, built at the first turn;
		// rendering it here too loaded the prompt config at session/new, and the heap that
		// took (0.9 MB) stayed resident in a daemon that idles.
		in.system = s.m.systemWith(maps.Clone(run))
	}
	s.mu.Lock()
	s.instr = in
	s.mu.Unlock()
	return cur != nil || len(files) > 0
}

// systemPrompt is the session's system prompt: the manager's, with its project instructions.
func (s *Session) systemPrompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil || len(s.instr.files) == 0 {
		return s.m.system()
	}
	return s.instr.system
}

// instructionsRun is a copy of the run values the session's instructions add to the system
// prompt (empty without instructions).
func (s *Session) instructionsRun() prompts.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil || len(s.instr.files) == 0 {
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
