package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPromptsExportCheck: the exported built-in set checks clean; a broken file fails the
// check naming the file and the path; exporting never overwrites.
func TestPromptsExportCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "prompts")
	var out, errb bytes.Buffer
	if code := runPrompts([]string{"export", dir}, &out, &errb); code != 0 {
		t.Fatalf("export: %d %s", code, errb.String())
	}
	if !strings.Contains(out.String(), filepath.Join(dir, "agent.yml")) {
		t.Fatalf("export printed %q", out.String())
	}
	out.Reset()
	if code := runPrompts([]string{"check", dir}, &out, &errb); code != 0 {
		t.Fatalf("check of the exported set: %d %s", code, errb.String())
	}
	if code := runPrompts([]string{"export", dir}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "exists") {
		t.Fatalf("a second export overwrote: %d %s", code, errb.String())
	}
	rules := filepath.Join(dir, "rules.yml")
	os.WriteFile(rules, []byte("rules:\n  - title: \"A\"\n    items: []\n"), 0o644)
	errb.Reset()
	if code := runPrompts([]string{"check", dir}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "rules.yml: rules[0].items is empty") {
		t.Fatalf("check of a broken set: %d %s", code, errb.String())
	}
	if code := runPrompts([]string{"frobnicate", dir}, &out, &errb); code != exitUsage {
		t.Fatalf("unknown subcommand: %d", code)
	}
}

// TestDaemonBrokenPromptsStopStartup: a user prompt config that does not load stops the daemon
// before it serves, with the error, instead of serving a half-rendered prompt.
func TestDaemonBrokenPromptsStopStartup(t *testing.T) {
	cfg := t.TempDir()
	dir := filepath.Join(cfg, "agentd", "prompts")
	var out, errb bytes.Buffer
	if code := runPrompts([]string{"export", dir}, &out, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	os.WriteFile(filepath.Join(dir, "tasks.yml"), []byte("chat_title:\n  system: 42\n"), 0o644)
	cmd := exec.Command(daemonBinary(t))
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cfg, "XDG_STATE_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "tasks.yml: chat_title.system is a number (42); quote it") {
		t.Fatalf("exit %v:\n%s", err, stderr.String())
	}
}
