package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// Slash commands: the built-ins (/compact, /init, /undo), Markdown command files of the project
// (<root>/.agentd/commands/NAME.md) and of the user ($XDG_CONFIG_HOME/agentd/commands/NAME.md),
// and the MCP servers' prompts (mcp.go). A command file is data: its body becomes the user's
// prompt text only when the user types the command, and nothing in it (front matter included)
// reaches settings, modes or permissions. Of two commands of one name the built-in wins, then
// the user's own file: a repository cannot change what a command the user wrote sends.

const (
	// maxCommandBytes bounds one command file; a larger one is not offered.
	maxCommandBytes = 32 << 10
	// maxCommandFiles bounds the files read from one directory.
	maxCommandFiles = 200
	// maxCommandDescription bounds a description as the client shows it.
	maxCommandDescription = 200
)

// commandName says what a command file's name may be: one word a user types after "/", no path
// separators, no dots (a dot names an MCP server's prompt): a letter or digit, then up to 63
// letters, digits, "_" or "-". (A loop, not a regexp: `{0,63}` compiles to 63 copies of its
// class at every start of agentd.)
func commandName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i, r := range name {
		alnum := r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || r != '_' && r != '-') {
			return false
		}
	}
	return true
}

// builtinCommand is a command agentd itself runs.
type builtinCommand struct {
	name, description, hint string
}

// builtinCommands are listed first, in this order, and win over files of the same name.
var builtinCommands = []builtinCommand{
	{"compact", "Summarize the conversation so far to free context", ""},
	{"init", "Survey the project and write an AGENTS.md for it (asks before writing)", "what to focus on"},
	{"undo", "Restore the files the newest turn changed", ""},
}

func isBuiltin(name string) bool {
	return slices.ContainsFunc(builtinCommands, func(b builtinCommand) bool { return b.name == name })
}

// fileCommand is one command file as read.
type fileCommand struct {
	name, description, hint string
	source                  string // "project" or "user"
	path                    string
	body                    string
	// unusable says why the file is not offered (too large, unreadable); "" when it is.
	unusable string
}

// commandFiles are a session's command files and the listing they were read from, so a turn
// can tell cheaply whether anything changed.
type commandFiles struct {
	stamp string
	list  []fileCommand // by name; the user's first where both have one
}

// userCommandsDir is $XDG_CONFIG_HOME/agentd/commands.
func userCommandsDir() string {
	d := userConfigDir()
	if d == "" {
		return ""
	}
	return filepath.Join(d, "commands")
}

// commandDir is one directory of command files, read through fsys (an os.Root for the
// project's, so a link cannot lead out of the project).
type commandDir struct {
	source string
	shown  string // the directory as paths show it
	fsys   fs.FS
	dir    string // inside fsys
}

// projectCommandDir opens <root>/.agentd/commands confined to the project root.
func projectCommandDir(root string) (commandDir, func()) {
	return confinedCommandDir("project", root, ".agentd/commands")
}

// confinedCommandDir opens dir (slash-separated, inside base) through an os.Root of base, so a
// command file that is a link leading out of base is refused rather than read: the project's
// confined to the project root, the user's own to ~/.config/agentd/commands (a link there to
// ~/.ssh would otherwise put a key into a prompt).
func confinedCommandDir(source, base, dir string) (commandDir, func()) {
	r, err := os.OpenRoot(base)
	if err != nil {
		return commandDir{}, func() {}
	}
	return commandDir{source: source, shown: filepath.Join(base, filepath.FromSlash(dir)), fsys: r.FS(), dir: dir}, func() { r.Close() }
}

// stampCommands lists the .md files of the directories with their sizes and times: equal stamps
// mean nothing needs reading again.
func stampCommands(dirs []commandDir) string {
	var b strings.Builder
	for _, d := range dirs {
		if d.fsys == nil {
			continue
		}
		entries, err := fs.ReadDir(d.fsys, d.dir)
		if err != nil {
			continue
		}
		b.WriteString(d.source)
		for i, e := range entries {
			if i == maxCommandFiles {
				break
			}
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "\x00%s\x00%d\x00%d", e.Name(), info.Size(), info.ModTime().UnixNano())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// readCommands reads the command files of the directories, the user's first.
func readCommands(dirs []commandDir, log *zap.Logger) []fileCommand {
	var out []fileCommand
	seen := map[string]bool{}
	for _, d := range dirs {
		if d.fsys == nil {
			continue
		}
		entries, err := fs.ReadDir(d.fsys, d.dir)
		if err != nil {
			continue
		}
		for i, e := range entries {
			if i == maxCommandFiles {
				log.Warn("too many command files; the rest are not read", zap.String("dir", d.shown), zap.Int("max", maxCommandFiles))
				break
			}
			name, ok := strings.CutSuffix(e.Name(), ".md")
			if !ok || e.IsDir() {
				continue
			}
			if !commandName(name) {
				log.Info("command file skipped: its name is not a command name ([A-Za-z0-9_-], 64 at most)", zap.String("dir", d.shown), zap.String("file", e.Name()))
				continue
			}
			if isBuiltin(name) || seen[name] {
				log.Info("command file shadowed by a built-in or the user's own command", zap.String("path", filepath.Join(d.shown, e.Name())))
				continue
			}
			seen[name] = true
			c := fileCommand{name: name, source: d.source, path: filepath.Join(d.shown, e.Name())}
			data, err := readBounded(d.fsys, path.Join(d.dir, e.Name()))
			switch {
			case err != nil:
				c.unusable = err.Error()
			case !isText(data):
				c.unusable = "it is not UTF-8 text"
			default:
				c.parse(string(data))
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b fileCommand) int { return strings.Compare(a.name, b.name) })
	return out
}

// readBounded reads a command file, refusing one larger than maxCommandBytes.
func readBounded(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
			// os.Root's refusal of a link leading out, in words the user can act on.
			return nil, fmt.Errorf("it is a link that leads out of its directory (%v), which is never followed", err)
		}
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCommandBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCommandBytes {
		return nil, fmt.Errorf("it is larger than %d KB", maxCommandBytes>>10)
	}
	return data, nil
}

func isText(data []byte) bool {
	return !slices.Contains(data, 0) && utf8.Valid(data)
}

// parse reads the optional front matter (only `description` and `argument-hint` mean anything;
// every other key is ignored) and the body.
func (c *fileCommand) parse(text string) {
	text = strings.ReplaceAll(strings.TrimPrefix(text, "\uFEFF"), "\r\n", "\n")
	body := text
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		// The front matter ends at the next line that is "---"; without one there is none.
		lines := strings.SplitAfter(rest, "\n")
		for i, l := range lines {
			if strings.TrimRight(l, "\n") != "---" {
				continue
			}
			body = strings.Join(lines[i+1:], "")
			for _, line := range lines[:i] {
				k, v, ok := strings.Cut(line, ":")
				if !ok {
					continue
				}
				v = unquote(strings.TrimSpace(v))
				switch strings.TrimSpace(k) {
				case "description":
					c.description = v
				case "argument-hint":
					c.hint = v
				}
			}
			break
		}
	}
	c.body = strings.TrimSpace(body)
	if c.description == "" {
		first, _, _ := strings.Cut(c.body, "\n")
		c.description = strings.TrimLeft(first, "# ")
	}
	c.description = mcp.Clean(c.description, maxCommandDescription)
	c.hint = mcp.Clean(c.hint, maxCommandDescription)
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		if v[0] == '"' {
			if u, err := strconv.Unquote(v); err == nil {
				return u
			}
		}
		return v[1 : len(v)-1]
	}
	return v
}

// expand is the command's prompt text: the body with $ARGUMENTS replaced by args, or, when the
// body does not name them, the body with args after it.
func (c *fileCommand) expand(args string) string {
	if strings.Contains(c.body, "$ARGUMENTS") {
		return strings.ReplaceAll(c.body, "$ARGUMENTS", args)
	}
	if args == "" {
		return c.body
	}
	return c.body + "\n\n" + args
}

// refreshCommands reads the command files again when their listing changed, and reports
// whether the commands changed.
func (s *Session) refreshCommands() bool {
	var dirs []commandDir
	if u := userCommandsDir(); u != "" {
		ud, done := confinedCommandDir("user", u, ".")
		defer done()
		dirs = append(dirs, ud)
	}
	if s.roots != nil {
		pd, done := projectCommandDir(projectRoot(s.roots.Cwd()))
		defer done()
		dirs = append(dirs, pd)
	}
	stamp := stampCommands(dirs)
	s.mu.Lock()
	cur := s.commands
	s.mu.Unlock()
	if cur != nil && cur.stamp == stamp {
		return false
	}
	next := &commandFiles{stamp: stamp, list: readCommands(dirs, s.m.log)}
	s.mu.Lock()
	s.commands = next
	s.mu.Unlock()
	return cur != nil || len(next.list) > 0
}

// fileCommands is the session's command files as last read.
func (s *Session) fileCommands() []fileCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commands == nil {
		return nil
	}
	return s.commands.list
}

// availableCommands lists every command the session offers: the built-ins, the command files,
// the MCP servers' prompts.
func (s *Session) availableCommands() []protocol.AvailableCommand {
	var out []protocol.AvailableCommand
	add := func(name, desc, hint string) {
		ac := protocol.AvailableCommand{Name: name, Description: desc}
		if hint != "" {
			ac.Input = &struct {
				Hint string `json:"hint"`
			}{Hint: hint}
		}
		out = append(out, ac)
	}
	for _, b := range builtinCommands {
		add(b.name, b.description, b.hint)
	}
	files := s.fileCommands()
	for _, c := range files {
		if c.unusable == "" {
			add(c.name, c.description+" ("+c.source+")", c.hint)
		}
	}
	for _, sk := range s.skills() {
		if skillCommand(sk.Name, files) {
			add(sk.Name, mcp.Clean(sk.Description, maxCommandDescription)+" (skill)", "what to use it for") // a project file's text, gated as a command file's
		}
	}
	return append(out, s.mcpCommands()...)
}

// announceCommands sends the session's commands (available_commands_update).
func (s *Session) announceCommands() {
	s.refreshCommands()
	s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAvailableCommandsUpdate, AvailableCommands: s.availableCommands()})
}

// announceChangedCommands sends the commands again after a turn when a command file appeared,
// changed or went.
func (s *Session) announceChangedCommands() {
	if s.refreshCommands() {
		s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateAvailableCommandsUpdate, AvailableCommands: s.availableCommands()})
	}
}

// splitCommand reads "/NAME ARGS" from a prompt's first block.
func splitCommand(blocks []protocol.ContentBlock) (name, args string, ok bool) {
	if len(blocks) == 0 || blocks[0].Type != "text" {
		return "", "", false
	}
	text := strings.TrimSpace(blocks[0].Text)
	rest, ok := strings.CutPrefix(text, "/")
	if !ok {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\t\n\r"); i >= 0 {
		name, args = name[:i], rest[i+1:]
	}
	return name, strings.TrimSpace(args), true
}

// expandCommand turns a prompt that starts with /init or /NAME of a command file into the text
// it stands for (the rest of the prompt's blocks stay after it), and an MCP prompt's command
// into what the server renders. Anything else is sent as typed: an unknown /word gets an info
// notice, a path such as /etc/hosts none.
func (t *turn) expandCommand(blocks []protocol.ContentBlock) []protocol.ContentBlock {
	name, args, ok := splitCommand(blocks)
	if !ok {
		return blocks
	}
	with := func(text string) []protocol.ContentBlock {
		return append([]protocol.ContentBlock{protocol.TextBlock(text)}, blocks[1:]...)
	}
	if name == "init" {
		text := t.s.m.text("commands.init", prompts.Run{})
		if args != "" {
			text += "\n\n" + args
		}
		return with(text)
	}
	if strings.Contains(name, ".") {
		return t.expandMCPPrompt(blocks)
	}
	if !commandName(name) || isBuiltin(name) {
		return blocks
	}
	t.s.refreshCommands()
	for _, c := range t.s.fileCommands() {
		if c.name != name {
			continue
		}
		if c.unusable != "" {
			t.s.notice(protocol.SeverityWarning, "Command /"+name+" not used", c.path+": "+c.unusable+". The prompt was sent as typed.")
			return blocks
		}
		return with(c.expand(args))
	}
	if files := t.s.fileCommands(); slices.ContainsFunc(t.s.skills(), func(sk tools.Skill) bool { return sk.Name == name && skillCommand(name, files) }) {
		text := t.s.m.text("commands.skill", prompts.Run{"SKILL": name})
		if args != "" {
			text += "\n\n" + args
		}
		return with(text)
	}
	t.s.notice(protocol.SeverityInfo, "No command /"+name, "The prompt was sent to the model as typed.")
	return blocks
}

// skillCommand reports whether a skill of that name is offered as /NAME: built-ins and command
// files of the same name win over it.
func skillCommand(name string, files []fileCommand) bool {
	return commandName(name) && !isBuiltin(name) && !slices.ContainsFunc(files, func(c fileCommand) bool { return c.name == name })
}
