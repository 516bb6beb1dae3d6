package tools

import (
	"os/exec"
	"testing"
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
