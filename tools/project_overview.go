package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

type projectOverviewIn struct{}

// ProjectOverview is the project_overview tool.
var ProjectOverview Tool = &typed[projectOverviewIn]{spec: Spec{Name: "project_overview", Effect: EffectRead, Kind: "read", Title: "Project overview"}, run: projectOverview}

// languageName is the language of a file extension (lower case): a switch, where a map literal
// would be built by the package's init at every start.
func languageName(ext string) (string, bool) {
	switch ext {
	case ".go":
		return "Go", true
	case ".py", ".pyi":
		return "Python", true
	case ".js", ".mjs", ".cjs", ".jsx":
		return "JavaScript", true
	case ".ts", ".tsx", ".mts", ".cts":
		return "TypeScript", true
	case ".rs":
		return "Rust", true
	case ".java":
		return "Java", true
	case ".kt", ".kts":
		return "Kotlin", true
	case ".scala":
		return "Scala", true
	case ".cs":
		return "C#", true
	case ".c":
		return "C", true
	case ".h":
		return "C/C++ header", true
	case ".cc", ".cpp", ".cxx", ".hpp", ".hh":
		return "C++", true
	case ".m":
		return "Objective-C", true
	case ".mm":
		return "Objective-C++", true
	case ".swift":
		return "Swift", true
	case ".rb":
		return "Ruby", true
	case ".php":
		return "PHP", true
	case ".lua":
		return "Lua", true
	case ".sh", ".bash":
		return "Shell", true
	case ".zig":
		return "Zig", true
	case ".dart":
		return "Dart", true
	case ".ex", ".exs":
		return "Elixir", true
	case ".erl":
		return "Erlang", true
	case ".hs":
		return "Haskell", true
	case ".ml":
		return "OCaml", true
	case ".clj":
		return "Clojure", true
	case ".r":
		return "R", true
	case ".jl":
		return "Julia", true
	case ".vue":
		return "Vue", true
	case ".svelte":
		return "Svelte", true
	case ".html":
		return "HTML", true
	case ".css":
		return "CSS", true
	case ".scss":
		return "SCSS", true
	case ".sql":
		return "SQL", true
	case ".proto":
		return "Protocol Buffers", true
	case ".md":
		return "Markdown", true
	case ".s", ".asm":
		return "Assembly", true
	case ".vim":
		return "Vim script", true
	case ".tf":
		return "Terraform", true
	}
	return "", false
}

// isManifest reports whether a file name is a build manifest's.
func isManifest(name string) bool {
	switch name {
	case "go.mod", "go.work", "package.json", "Cargo.toml", "pyproject.toml", "requirements.txt",
		"setup.py", "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
		"Gemfile", "composer.json", "CMakeLists.txt", "Makefile", "deno.json", "pubspec.yaml",
		"mix.exs":
		return true
	}
	return false
}

const overviewMaxFiles = 100000

func projectOverview(ctx context.Context, env *Env, _ projectOverviewIn) Result {
	var b strings.Builder
	for _, root := range env.Roots.Dirs() {
		if ctx.Err() != nil {
			return Errorf("cancelled")
		}
		fmt.Fprintf(&b, "# %s", root)
		if root == env.Roots.Cwd() {
			b.WriteString(" (working directory)")
		}
		b.WriteString("\n")
		overviewRoot(ctx, env, root, &b)
		b.WriteString("\n")
	}
	return Result{Output: strings.TrimRight(b.String(), "\n") + "\n"}
}

func overviewRoot(ctx context.Context, env *Env, root string, b *strings.Builder) {
	langs := map[string]int{}
	dirs := map[string]int{}
	var manifests []string
	files := 0
	truncated := false
	stats, _ := walk(ctx, root, root, walkOpts{}, func(e walkEntry) error {
		if e.Entry.IsDir() {
			switch e.Entry.Name() {
			case "node_modules", "vendor", "target", "dist", "build", "__pycache__", ".venv", "venv":
				if e.Depth > 1 || e.Entry.Name() != "build" {
					return fs.SkipDir
				}
			}
			return nil
		}
		files++
		if files > overviewMaxFiles {
			truncated = true
			return fs.SkipAll
		}
		name := e.Entry.Name()
		if isManifest(name) && len(manifests) < 200 {
			manifests = append(manifests, e.Abs)
		}
		if lang, ok := languageName(strings.ToLower(filepath.Ext(name))); ok {
			langs[lang]++
			if lang != "Markdown" && len(e.Parts) > 1 {
				dirs[e.Parts[0]]++
			} else if lang != "Markdown" {
				dirs["."]++
			}
		}
		return nil
	})
	fmt.Fprintf(b, "Files: %d", files)
	if stats.Ignored > 0 {
		fmt.Fprintf(b, " (plus %d entries ignored by .gitignore)", stats.Ignored)
	}
	if truncated {
		fmt.Fprintf(b, " (stopped counting at %d)", overviewMaxFiles)
	}
	b.WriteString("\n")
	if len(langs) > 0 {
		fmt.Fprintf(b, "Languages: %s\n", topCounts(langs, 10, "files"))
	}
	if len(dirs) > 0 {
		fmt.Fprintf(b, "Source directories: %s\n", topCounts(dirs, 15, "source files"))
	}
	gitSummary(ctx, root, b)
	if len(manifests) == 0 {
		b.WriteString("Manifests: none found\n")
		return
	}
	sort.Slice(manifests, func(i, j int) bool {
		di, dj := strings.Count(manifests[i], string(filepath.Separator)), strings.Count(manifests[j], string(filepath.Separator))
		if di != dj {
			return di < dj
		}
		return manifests[i] < manifests[j]
	})
	b.WriteString("Manifests:\n")
	for i, m := range manifests {
		if i == 40 {
			fmt.Fprintf(b, "- … %d more\n", len(manifests)-40)
			break
		}
		fmt.Fprintf(b, "- %s", rel(env, m))
		if s := describeManifest(m); s != "" {
			fmt.Fprintf(b, ": %s", s)
		}
		b.WriteString("\n")
	}
}

func topCounts(m map[string]int, n int, unit string) string {
	type kv struct {
		k string
		v int
	}
	var list []kv
	for k, v := range m {
		list = append(list, kv{k, v})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].v != list[j].v {
			return list[i].v > list[j].v
		}
		return list[i].k < list[j].k
	})
	var parts []string
	for i, e := range list {
		if i == n {
			parts = append(parts, fmt.Sprintf("… %d more", len(list)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", e.k, e.v))
	}
	return strings.Join(parts, ", ") + " " + unit
}

// gitSummary reads the branch from .git/HEAD and counts uncommitted changes with git status when
// git is installed.
func gitSummary(ctx context.Context, root string, b *strings.Builder) {
	gitDir := filepath.Join(root, ".git")
	st, err := os.Stat(gitDir)
	if err != nil {
		b.WriteString("Git: not a repository root\n")
		return
	}
	if !st.IsDir() {
		// A worktree or submodule: .git is a file naming the real directory.
		if data, err := os.ReadFile(gitDir); err == nil {
			if d, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: "); ok {
				if !filepath.IsAbs(d) {
					d = filepath.Join(root, d)
				}
				gitDir = d
			}
		}
	}
	branch := "unknown"
	if h, ok := readHead(filepath.Join(gitDir, "HEAD")); ok {
		if ref, ok := strings.CutPrefix(h, "ref: refs/heads/"); ok {
			branch = ref
		} else if isObjectID(h) {
			branch = "detached at " + h[:12]
		}
	}
	fmt.Fprintf(b, "Git: branch %s", branch)
	if git, err := exec.LookPath("git"); err == nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if out, err := untrustedGit(cctx, git, root, gitDir, "status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=all"); err == nil {
			n := 0
			for _, l := range strings.Split(string(out), "\n") {
				if strings.TrimSpace(l) != "" {
					n++
				}
			}
			if n == 0 {
				b.WriteString(", clean")
			} else {
				fmt.Fprintf(b, ", %s with uncommitted changes", plural(n, "path"))
			}
		}
	}
	b.WriteString("\n")
}

// readHead reads a HEAD file: a regular file, not a link (a repository that came as an archive
// can hold `.git/HEAD -> /proc/self/environ`), of at most a ref's size, on one line.
func readHead(path string) (string, bool) {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 512 {
		return "", false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	h := strings.TrimSpace(string(data))
	if strings.ContainsAny(h, "\n\r") {
		return "", false
	}
	return h, true
}

// isObjectID reports whether s is a SHA-1 or SHA-256 object id in hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// describeManifest reads a manifest's name, members and dependencies.
func describeManifest(path string) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 2<<20 {
		return ""
	}
	text := string(data)
	switch filepath.Base(path) {
	case "go.mod":
		return describeGoMod(text)
	case "go.work":
		uses := goBlock(text, "use")
		return "Go workspace using " + listCap(uses, 20)
	case "package.json", "composer.json", "deno.json":
		return describePackageJSON(data)
	case "Cargo.toml":
		name := tomlValue(text, "package", "name")
		deps := tomlKeys(text, "dependencies")
		s := ""
		if name != "" {
			s = "crate " + name
		}
		if members := tomlArray(text, "workspace", "members"); len(members) > 0 {
			s = strings.TrimSpace(s + " workspace members " + listCap(members, 20))
		}
		if len(deps) > 0 {
			s += "; dependencies: " + listCap(deps, 20)
		}
		return s
	case "pyproject.toml":
		name := tomlValue(text, "project", "name")
		if name == "" {
			name = tomlValue(text, "tool.poetry", "name")
		}
		deps := tomlArray(text, "project", "dependencies")
		if len(deps) == 0 {
			deps = tomlKeys(text, "tool.poetry.dependencies")
		}
		s := ""
		if name != "" {
			s = "Python project " + name
		}
		if len(deps) > 0 {
			s += "; dependencies: " + listCap(deps, 20)
		}
		return s
	case "requirements.txt":
		var deps []string
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "-") {
				deps = append(deps, l)
			}
		}
		return "dependencies: " + listCap(deps, 20)
	case "pom.xml":
		return describePom(data)
	case "build.gradle", "build.gradle.kts":
		var deps []string
		for _, m := range gradleDep.FindAllStringSubmatch(text, -1) {
			deps = append(deps, m[2])
		}
		if len(deps) > 0 {
			return "dependencies: " + listCap(deps, 20)
		}
	}
	return ""
}

var gradleDep = regexp.MustCompile(`(?m)^\s*(implementation|api|compileOnly|runtimeOnly|testImplementation|kapt|annotationProcessor)\s*\(?\s*["']([^"']+)["']`)

func describeGoMod(text string) string {
	var module, goVer string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "module" {
			module = strings.Trim(f[1], `"`)
		}
		if len(f) >= 2 && f[0] == "go" {
			goVer = f[1]
		}
	}
	var direct, indirect []string
	for _, r := range goBlock(text, "require") {
		if strings.Contains(r, "// indirect") {
			indirect = append(indirect, strings.Fields(r)[0])
		} else {
			direct = append(direct, strings.Join(strings.Fields(r)[:min(2, len(strings.Fields(r)))], " "))
		}
	}
	s := "Go module " + module
	if goVer != "" {
		s += " (go " + goVer + ")"
	}
	if len(direct) > 0 {
		s += "; requires " + listCap(direct, 20)
	}
	if len(indirect) > 0 {
		s += fmt.Sprintf("; %d indirect", len(indirect))
	}
	return s
}

// goBlock returns the entries of a go.mod / go.work directive, in block or single-line form.
func goBlock(text, directive string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case in && t == ")":
			in = false
		case in:
			if t != "" && !strings.HasPrefix(t, "//") {
				out = append(out, t)
			}
		case t == directive+" (":
			in = true
		case strings.HasPrefix(t, directive+" "):
			out = append(out, strings.TrimSpace(strings.TrimPrefix(t, directive)))
		}
	}
	return out
}

func describePackageJSON(data []byte) string {
	var p struct {
		Name            string            `json:"name"`
		Workspaces      json.RawMessage   `json:"workspaces"`
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
		Require         map[string]string `json:"require"`
		Scripts         map[string]string `json:"scripts"`
	}
	if json.Unmarshal(data, &p) != nil {
		return "(not valid JSON)"
	}
	var parts []string
	if p.Name != "" {
		parts = append(parts, "package "+p.Name)
	}
	var ws []string
	if json.Unmarshal(p.Workspaces, &ws) != nil {
		var obj struct {
			Packages []string `json:"packages"`
		}
		if json.Unmarshal(p.Workspaces, &obj) == nil {
			ws = obj.Packages
		}
	}
	if len(ws) > 0 {
		parts = append(parts, "workspaces "+listCap(ws, 20))
	}
	for _, d := range []struct {
		label string
		m     map[string]string
	}{{"dependencies", p.Dependencies}, {"devDependencies", p.DevDependencies}, {"require", p.Require}} {
		if len(d.m) == 0 {
			continue
		}
		var names []string
		for k := range d.m {
			names = append(names, k)
		}
		sort.Strings(names)
		parts = append(parts, d.label+": "+listCap(names, 20))
	}
	if len(p.Scripts) > 0 {
		var names []string
		for k := range p.Scripts {
			names = append(names, k)
		}
		sort.Strings(names)
		parts = append(parts, "scripts: "+listCap(names, 15))
	}
	return strings.Join(parts, "; ")
}

func describePom(data []byte) string {
	var p struct {
		GroupID    string   `xml:"groupId"`
		ArtifactID string   `xml:"artifactId"`
		Modules    []string `xml:"modules>module"`
		Deps       []struct {
			GroupID    string `xml:"groupId"`
			ArtifactID string `xml:"artifactId"`
		} `xml:"dependencies>dependency"`
	}
	if xml.Unmarshal(data, &p) != nil {
		return "(not valid XML)"
	}
	s := "Maven artifact " + strings.Trim(p.GroupID+":"+p.ArtifactID, ":")
	if len(p.Modules) > 0 {
		s += "; modules " + listCap(p.Modules, 20)
	}
	var deps []string
	for _, d := range p.Deps {
		deps = append(deps, d.GroupID+":"+d.ArtifactID)
	}
	if len(deps) > 0 {
		s += "; dependencies: " + listCap(deps, 20)
	}
	return s
}

// The TOML readers understand the plain forms manifests use: [section], key = "value", and
// arrays of strings, possibly over several lines.
func tomlSection(text, section string) []string {
	var out []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(t, "[") {
			in = t == "["+section+"]"
			continue
		}
		if in && t != "" && !strings.HasPrefix(t, "#") {
			out = append(out, t)
		}
	}
	return out
}

func tomlValue(text, section, key string) string {
	for _, l := range tomlSection(text, section) {
		k, v, ok := strings.Cut(l, "=")
		if ok && strings.TrimSpace(k) == key {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

func tomlKeys(text, section string) []string {
	var out []string
	for _, l := range tomlSection(text, section) {
		if k, _, ok := strings.Cut(l, "="); ok {
			k = strings.Trim(strings.TrimSpace(k), `"`)
			if k != "" && k != "python" && !strings.ContainsAny(k, "[]") {
				out = append(out, k)
			}
		}
	}
	return out
}

var tomlString = regexp.MustCompile(`"([^"]*)"|'([^']*)'`)

func tomlArray(text, section, key string) []string {
	lines := tomlSection(text, section)
	for i, l := range lines {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		body := v
		for j := i + 1; !strings.Contains(body, "]") && j < len(lines); j++ {
			body += " " + lines[j]
		}
		var out []string
		for _, m := range tomlString.FindAllStringSubmatch(body, -1) {
			out = append(out, m[1]+m[2])
		}
		return out
	}
	return nil
}

func listCap(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" (+%d more)", len(items)-n)
}

// untrustedGit runs a read-only git command in a repository whose configuration is the
// project's, i.e. untrusted: a cloned .git/config (and any file it includes) may name programs
// git runs on its own (filter drivers, core.fsmonitor, hooks, the pager, diff.external, textconv,
// and whatever a later git adds). Rather than switch off each such key, which is a list that is
// never complete (and `-c key=value` splits a key that contains '=' at the wrong place), git is
// given no configuration of the repository at all: it runs on a private git directory whose config
// agentd writes, holding only the repository-format facts it reads from .git/config itself, and
// whose HEAD, index, objects and refs are the repository's. The system and global configuration
// are not read either, and no GIT_* variable of agentd's own environment is passed on.
func untrustedGit(ctx context.Context, git, root, gitDir string, args ...string) ([]byte, error) {
	shadow, err := os.MkdirTemp("", "agentd-git-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(shadow)
	if err := shadowGitDir(shadow, gitDir); err != nil {
		return nil, err
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_DIR="+shadow, "GIT_WORK_TREE="+root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "PAGER=cat")
	cmd := exec.CommandContext(ctx, git, append([]string{"--no-pager"}, args...)...)
	cmd.Dir = root
	cmd.Env = env
	setProcessGroup(cmd)
	return cmd.Output()
}

// shadowGitDir fills dir with a git directory that reads gitDir's state but none of its
// configuration. In a linked worktree, objects and refs live in the common directory.
func shadowGitDir(dir, gitDir string) error {
	common := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	// HEAD is copied, not linked: git reads a HEAD that is a symbolic link as a link to a ref.
	// Only a HEAD that is a regular file naming a ref or an object is copied.
	head, ok := readHead(filepath.Join(gitDir, "HEAD"))
	if !ok || !strings.HasPrefix(head, "ref: refs/") && !isObjectID(head) {
		return errors.New("HEAD is not a ref or an object id")
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte(head+"\n"), 0o600); err != nil {
		return err
	}
	links := []struct{ from, name string }{
		{gitDir, "index"}, {common, "objects"}, {common, "refs"}, {common, "packed-refs"},
		{common, "info"}, {common, "shallow"}, {common, "reftable"},
	}
	for _, l := range links {
		target := filepath.Join(l.from, l.name)
		if _, err := os.Lstat(target); err != nil {
			continue
		}
		if err := os.Symlink(target, filepath.Join(dir, l.name)); err != nil {
			return err
		}
	}
	var cfg strings.Builder
	version, ext := repoFormat(filepath.Join(common, "config"))
	fmt.Fprintf(&cfg, "[core]\n\trepositoryformatversion = %s\n\tbare = false\n\tfsmonitor = false\n\thooksPath = %s\n", version, os.DevNull)
	if len(ext) > 0 {
		cfg.WriteString("[extensions]\n")
		for _, kv := range ext {
			fmt.Fprintf(&cfg, "\t%s = %s\n", kv[0], kv[1])
		}
	}
	return os.WriteFile(filepath.Join(dir, "config"), []byte(cfg.String()), 0o600)
}

// repoFormat reads from a git config file the facts git needs to read the repository at all:
// core.repositoryformatversion and the extensions that change the object or ref format. Values
// are kept only when they are plain words, so nothing the file says reaches the written
// configuration as anything but one of these keys. Includes are not followed: these keys are
// never set through one by git itself.
func repoFormat(path string) (version string, ext [][2]string) {
	version = "0"
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 1<<20 {
		return version, nil
	}
	plain := func(s string) bool {
		if s == "" || len(s) > 32 {
			return false
		}
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
				return false
			}
		}
		return true
	}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				section = ""
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			line = strings.TrimSpace(line[end+1:])
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.ToLower(strings.Trim(strings.TrimSpace(v), `"`))
		if !plain(v) {
			continue
		}
		switch {
		case section == "core" && k == "repositoryformatversion":
			version = v
		case section == "extensions" && (k == "objectformat" || k == "refstorage"):
			ext = append(ext, [2]string{k, v})
		}
	}
	return version, ext
}
