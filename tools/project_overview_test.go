package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
