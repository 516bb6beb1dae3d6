package acceptance_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
)

// Through the real binary, in plan mode (where project_overview runs with no question): a cloned
// repository whose .git/config names a filter driver with '=' in its name, an fsmonitor and a
// hooks directory gets none of them run by agentd's own git.
func TestProjectOverviewRunsNoRepositoryProgramInPlanMode(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	e := start(t, fakeeditor.Full(), replay(t, responses(
		map[string]any{"toolCalls": []any{map[string]any{"id": "o", "name": "project_overview", "args": map[string]any{}}}},
		map[string]any{"text": "surveyed"},
	)))
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	script := filepath.Join(dir, "evil.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.writeFile("a.txt", "a\n")
	e.writeFile(".gitattributes", "*.txt filter=x=y\n")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = e.root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "x")
	git("config", "filter.x=y.clean", script)
	git("config", "filter.x=y.process", script)
	git("config", "core.fsmonitor", script)
	git("config", "core.hooksPath", dir)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(e.root, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	sid := e.newSession()
	e.setMode(sid, "plan")
	e.prompt(sid, "survey the project")
	f := finalUpdate(e, sid, "o")
	b, _ := json.Marshal(f)
	if f == nil || f["status"] != "completed" || !strings.Contains(string(b), "Git: branch main, clean") {
		t.Fatalf("project_overview's final update: %s", b)
	}
	if out, err := os.ReadFile(marker); err == nil {
		t.Fatalf("agentd's git ran a program the repository configured:\n%s", out)
	}
}
