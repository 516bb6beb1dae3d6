package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/workspace"
)

func TestProjectOverview(t *testing.T) {
	h := newHarness(t, map[string]string{
		".gitignore":        "node_modules/\n",
		"go.mod":            "module example.com/demo\n\ngo 1.26\n\nrequire (\n\tgithub.com/a/b v1.2.3\n\tgolang.org/x/sys v0.1.0 // indirect\n)\n",
		"go.work":           "go 1.26\n\nuse (\n\t.\n\t./tools\n)\n",
		"cmd/demo/main.go":  "package main\n",
		"internal/x/x.go":   "package x\n",
		"internal/x/y.go":   "package x\n",
		"web/package.json":  `{"name": "web", "workspaces": ["packages/*"], "dependencies": {"react": "^18"}, "devDependencies": {"vite": "^5"}, "scripts": {"build": "vite build"}}`,
		"web/src/app.ts":    "export {}\n",
		"rs/Cargo.toml":     "[package]\nname = \"core\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\ntokio = { version = \"1\" }\n",
		"py/pyproject.toml": "[project]\nname = \"tooling\"\ndependencies = [\n  \"requests>=2\",\n  \"click\",\n]\n",
		"java/pom.xml":      "<project><groupId>org.ex</groupId><artifactId>app</artifactId><dependencies><dependency><groupId>junit</groupId><artifactId>junit</artifactId></dependency></dependencies></project>",
		"kt/build.gradle":   "dependencies {\n  implementation 'com.squareup:okhttp:4.0'\n}\n",
		"node_modules/x.js": "",
		".git/HEAD":         "ref: refs/heads/feature/x\n",
	})
	r := mustOK(t, h.run("project_overview", map[string]any{}))
	mustContain(t, r.Output,
		"(working directory)",
		"Languages: Go (3), TypeScript (1) files",
		"internal (2)",
		"Git: branch feature/x",
		"- go.mod: Go module example.com/demo (go 1.26); requires github.com/a/b v1.2.3; 1 indirect",
		"- go.work: Go workspace using ., ./tools",
		"- web/package.json: package web; workspaces packages/*; dependencies: react; devDependencies: vite; scripts: build",
		"- rs/Cargo.toml: crate core; dependencies: serde, tokio",
		"- py/pyproject.toml: Python project tooling; dependencies: requests>=2, click",
		"- java/pom.xml: Maven artifact org.ex:app; dependencies: junit:junit",
		"- kt/build.gradle: dependencies: com.squareup:okhttp:4.0",
	)
	mustErr(t, h.run("project_overview", map[string]any{"x": 1}), "unknown field x")
}

func TestProjectOverviewGitDirty(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	h := newHarness(t, map[string]string{"a.txt": "a\n"})
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = h.root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	r := mustOK(t, h.run("project_overview", nil))
	mustContain(t, r.Output, "Git: branch main, 1 path with uncommitted changes")
}

// A cloned repository's .git/config can name programs git runs: core.fsmonitor on every status,
// a clean filter whenever git hashes a file whose stat changed. project_overview runs in plan
// mode with no prompt, so none of them may run.
func TestProjectOverviewGitRunsNoRepoPrograms(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	h := newHarness(t, map[string]string{"a.txt": "a\n", ".gitattributes": "*.txt filter=evil\n"})
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = h.root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("-c", "user.email=t@t", "-c", "user.name=t", "add", "a.txt", ".gitattributes")
	git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "x")
	// Only now arm the repository, so setting it up ran nothing.
	git("config", "core.fsmonitor", script)
	git("config", "filter.evil.clean", script)
	git("config", "filter.evil.process", script)
	git("config", "core.hooksPath", filepath.Dir(script))
	// Change a.txt's stat, not its content, so status must hash it again (through the filter).
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(h.root, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	r := mustOK(t, h.run("project_overview", nil))
	// "clean" proves status ran (with the filters off, a.txt's content is unchanged).
	mustContain(t, r.Output, "Git: branch main, clean")
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("project_overview ran a program the repository configured:\n%s", b)
	}
}

// Every way a repository's configuration can name a program git would run, each planted on its
// own: project_overview runs git status with no prompt in every mode (plan included), so none
// may run. A filter name may contain '=', which `-c key=value` splits at; an included file
// (include.path, includeIf) may declare what .git/config itself does not.
func TestProjectOverviewGitIgnoresEveryRepoProgram(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	type plant struct {
		name       string
		attributes string
		config     [][2]string // key, value; "$S" is the marker script, "$I" the included file
		included   string      // the text of the file $I, in git config syntax
		hooks      []string    // hooks planted in core.hooksPath
		// arm is a git command that runs the planted program when git is run plainly (with the
		// repository's configuration), proving the plant is live; armVar instead names a `git
		// var` whose value must be the planted program.
		arm    []string
		armVar string
	}
	status := []string{"status"}
	plants := []plant{
		{name: "filter clean named with =", attributes: "*.txt filter=x=y\n", config: [][2]string{{"filter.x=y.clean", "$S"}}, arm: status},
		{name: "filter process named with =", attributes: "*.txt filter=x=y\n", config: [][2]string{{"filter.x=y.process", "$S"}}, arm: status},
		{name: "filter smudge named with =", attributes: "*.txt filter=x=y\n", config: [][2]string{{"filter.x=y.smudge", "$S"}}, arm: []string{"cat-file", "--filters", "HEAD:a.txt"}},
		{name: "filter clean", attributes: "*.txt filter=evil\n", config: [][2]string{{"filter.evil.clean", "$S"}}, arm: status},
		{name: "filter process", attributes: "*.txt filter=evil\n", config: [][2]string{{"filter.evil.process", "$S"}}, arm: status},
		{name: "core.fsmonitor", config: [][2]string{{"core.fsmonitor", "$S"}}, arm: status},
		{name: "core.hooksPath", config: [][2]string{{"core.hooksPath", "$H"}}, hooks: []string{"post-index-change", "pre-commit"},
			arm: []string{"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "armed"}},
		// git runs a pager only on a terminal, so the arming check asks git which pager it would run.
		{name: "core.pager", config: [][2]string{{"core.pager", "$S"}, {"pager.status", "true"}}, armVar: "GIT_PAGER"},
		{name: "diff.external", config: [][2]string{{"diff.external", "$S"}}, arm: []string{"show", "--ext-diff", "HEAD"}},
		{name: "textconv", attributes: "*.txt diff=tc\n", config: [][2]string{{"diff.tc.textconv", "$S"}}, arm: []string{"show", "HEAD"}},
		{name: "include.path", attributes: "*.txt filter=x=y\n", config: [][2]string{{"include.path", "$I"}},
			included: "[core]\n\tfsmonitor = $S\n[filter \"x=y\"]\n\tclean = $S\n\tprocess = $S\n", arm: status},
		{name: "includeIf gitdir", attributes: "*.txt filter=x=y\n", config: [][2]string{{"includeIf.gitdir:/.path", "$I"}},
			included: "[core]\n\tfsmonitor = $S\n[filter \"x=y\"]\n\tclean = $S\n", arm: status},
		{name: "includeIf onbranch", attributes: "*.txt filter=x=y\n", config: [][2]string{{"includeIf.onbranch:main.path", "$I"}},
			included: "[core]\n\tfsmonitor = $S\n[filter \"x=y\"]\n\tclean = $S\n", arm: status},
	}
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			files := map[string]string{"a.txt": "a\n"}
			if p.attributes != "" {
				files[".gitattributes"] = p.attributes
			}
			h := newHarness(t, files)
			dir := t.TempDir()
			marker := filepath.Join(dir, "ran")
			script := filepath.Join(dir, "evil.sh")
			prog := []byte("#!/bin/sh\necho \"$0 $*\" >> " + marker + "\ncat\n")
			if err := os.WriteFile(script, prog, 0o755); err != nil {
				t.Fatal(err)
			}
			hooks := filepath.Join(dir, "hooks")
			if err := os.MkdirAll(hooks, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, hook := range p.hooks {
				if err := os.WriteFile(filepath.Join(hooks, hook), prog, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			included := filepath.Join(dir, "included.cfg")
			if err := os.WriteFile(included, []byte(strings.ReplaceAll(p.included, "$S", script)), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) ([]byte, error) {
				cmd := exec.Command("git", args...)
				cmd.Dir = h.root
				// GIT_OPTIONAL_LOCKS=0: the arming status must not refresh the index, or the
				// tool's status would have nothing to hash again.
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_OPTIONAL_LOCKS=0")
				return cmd.CombinedOutput()
			}
			git := func(args ...string) {
				t.Helper()
				if out, err := run(args...); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			git("init", "-q", "-b", "main")
			git("add", ".")
			git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "x")
			// Only now arm the repository, so setting it up ran nothing.
			for _, kv := range p.config {
				v := strings.NewReplacer("$S", script, "$H", hooks, "$I", included).Replace(kv[1])
				git("config", kv[0], v)
			}
			// Change a.txt's stat, not its content, before the arming check too: right after the
			// commit git may take the index's stat data as clean (unless the two fell in the same
			// second, "racy git"), and then plain status would hash nothing through a filter.
			earlier := time.Now().Add(30 * time.Minute)
			if err := os.Chtimes(filepath.Join(h.root, "a.txt"), earlier, earlier); err != nil {
				t.Fatal(err)
			}
			// The plant is live: git run plainly runs it (the test would prove nothing otherwise).
			if p.armVar != "" {
				if out, _ := run("var", p.armVar); strings.TrimSpace(string(out)) != script {
					t.Fatalf("git var %s = %q, want the planted %s", p.armVar, out, script)
				}
			} else {
				out, _ := run(p.arm...) // a program that breaks the filter protocol may fail git
				if _, err := os.Stat(marker); err != nil {
					t.Fatalf("plain git %v did not run the planted program; the plant is not live:\n%s", p.arm, out)
				}
				if err := os.Remove(marker); err != nil {
					t.Fatal(err)
				}
			}
			// Change a.txt's stat, not its content, so status must hash it again (through a filter).
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(h.root, "a.txt"), later, later); err != nil {
				t.Fatal(err)
			}
			r := mustOK(t, h.run("project_overview", nil))
			// "clean" proves status ran (with no filter, a.txt's content is unchanged).
			mustContain(t, r.Output, "Git: branch main, clean")
			if b, err := os.ReadFile(marker); err == nil {
				t.Fatalf("project_overview ran a program the repository configured:\n%s", b)
			}
		})
	}
}

// A linked worktree's .git is a file naming its git directory, whose objects and refs live in the
// common directory: status still works there, and the common config's programs still do not run.
func TestProjectOverviewGitLinkedWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	main := t.TempDir()
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho ran >> "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(in string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = in
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(main, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(main, "init", "-q", "-b", "main")
	git(main, "add", ".")
	git(main, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "x")
	wt := filepath.Join(t.TempDir(), "wt")
	git(main, "worktree", "add", "-q", "-b", "side", wt)
	git(main, "config", "core.fsmonitor", script)
	h := newHarness(t, nil)
	h.root = wt
	roots, err := workspace.NewRoots(wt)
	if err != nil {
		t.Fatal(err)
	}
	h.env.Roots = roots
	r := mustOK(t, h.run("project_overview", nil))
	mustContain(t, r.Output, "Git: branch side, clean")
	if err := os.WriteFile(filepath.Join(wt, "new.txt"), []byte("n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustOK(t, h.run("project_overview", nil))
	mustContain(t, r.Output, "Git: branch side, 1 path with uncommitted changes")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("project_overview ran the common config's fsmonitor")
	}
}

// Issue 26 item 1 (found after it): a .git/HEAD that is a link (to /proc/self/environ, a key) or
// that holds something other than a ref or an object id must not put its text into the
// overview the model reads.
func TestProjectOverviewHeadLinkOrJunkShowsNothing(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(secret, []byte("PRIVATEKEYDATA0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, map[string]string{"a.txt": "a\n", ".git/objects/.keep": ""})
	head := filepath.Join(h.root, ".git", "HEAD")
	if err := os.Symlink(secret, head); err != nil {
		t.Fatal(err)
	}
	r := mustOK(t, h.run("project_overview", nil))
	if strings.Contains(r.Output, "PRIVATEKEY") {
		t.Fatalf("a HEAD link leaked its target:\n%s", r.Output)
	}
	mustContain(t, r.Output, "Git: branch unknown")
	os.Remove(head)
	if err := os.WriteFile(head, []byte("OPENAI_API_KEY=sk-live-abcdef\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustOK(t, h.run("project_overview", nil))
	if strings.Contains(r.Output, "OPENAI_API") {
		t.Fatalf("a junk HEAD reached the overview:\n%s", r.Output)
	}
	os.WriteFile(head, []byte("0123456789abcdef0123456789abcdef01234567\n"), 0o644)
	r = mustOK(t, h.run("project_overview", nil))
	mustContain(t, r.Output, "Git: branch detached at 0123456789ab")
}
