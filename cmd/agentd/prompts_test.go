package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
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

// TestPromptsDocExample runs docs/prompts.md's worked example: each block marked
// `<!-- example: FILE -->` is applied to an exported set (its keys replace the keys of that name:
// a text, a group's texts, a whole list) and `agentd prompts check` must accept the result, which
// then says what the example says it does.
func TestPromptsDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "prompts.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "prompts")
	var out, errb bytes.Buffer
	if code := runPrompts([]string{"export", dir}, &out, &errb); code != 0 {
		t.Fatalf("export: %s", errb.String())
	}
	blocks := regexp.MustCompile("(?s)<!-- example: ([a-z_]+\\.yml) -->\n```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 4 {
		t.Fatalf("docs/prompts.md has %d example blocks", len(blocks))
	}
	for _, b := range blocks {
		applyExample(t, filepath.Join(dir, b[1]), b[2])
	}
	if code := runPrompts([]string{"check", dir}, &out, &errb); code != 0 {
		t.Fatalf("agentd prompts check refuses the documented example:\n%s", errb.String())
	}
	set, err := prompts.LoadDir(dir, session.Catalog(tools.Default()))
	if err != nil {
		t.Fatal(err)
	}
	sys := set.Render("layout.system", prompts.Run{})
	if !strings.HasPrefix(sys, "You are agentd, a terse senior engineer") || !strings.Contains(sys, "House rules:\n- Run the tests with `make test`") {
		t.Errorf("the system prompt does not show the example:\n%s", sys)
	}
	if got := set.Render("layout.context", prompts.Run{"MODE_ASK": true, "CWD": "/p"}); !strings.Contains(got, "Berechtigungsmodus: fragen.") {
		t.Errorf("the context is not translated:\n%s", got)
	}
	if got := set.Render("approval.rejected", nil); !strings.HasPrefix(got, "Der Nutzer hat diesen Aufruf abgelehnt.") {
		t.Errorf("approval.rejected = %q", got)
	}
}

// applyExample sets the keys of the YAML block in the file: a top-level text or list replaces
// the file's, a group's texts replace those texts of the file's group.
func applyExample(t *testing.T, path, block string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file, ex yaml.Node
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(block), &ex); err != nil {
		t.Fatalf("the example for %s is not YAML: %v", path, err)
	}
	lookup := func(m *yaml.Node, key string) *yaml.Node {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		t.Fatalf("%s has no key %s", path, key)
		return nil
	}
	fm, em := file.Content[0], ex.Content[0]
	for i := 0; i+1 < len(em.Content); i += 2 {
		key, val := em.Content[i].Value, em.Content[i+1]
		have := lookup(fm, key)
		if val.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(val.Content); j += 2 {
				*lookup(have, val.Content[j].Value) = *val.Content[j+1]
			}
			continue
		}
		*have = *val
	}
	out, err := yaml.Marshal(&file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStartupDoesNotLoadThePromptConfig: start-up, up to the answer to initialize, does not parse
// the built-in prompt config (the first agent/session/new does, rendering the system prompt with
// the project's instructions), so the set adds nothing to start-up. It runs the daemon's own
// serveStdio in a child process, where nothing else has loaded the set, and asks it afterwards.
func TestStartupDoesNotLoadThePromptConfig(t *testing.T) {
	if os.Getenv("AGENTD_TEST_LAZY_CHILD") == "1" {
		code := serveStdio(zap.NewNop(), "", false)
		fmt.Fprintf(os.Stderr, "exit=%d builtin-loaded=%v\n", code, prompts.BuiltinLoaded())
		return
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartupDoesNotLoadThePromptConfig$")
	cmd.Env = append(os.Environ(), "AGENTD_TEST_LAZY_CHILD=1", "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"), "AGENTD_SECRET_STORE=file")
	var in bytes.Buffer
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"capabilities":{}}}`,
		`{"jsonrpc":"2.0","method":"initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","method":"exit"}`,
	} {
		fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(m), m)
	}
	cmd.Stdin = &in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	if !strings.Contains(out.String(), `"capabilities"`) {
		t.Fatalf("the child did not answer initialize:\n%s\n%s", out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "builtin-loaded=false") {
		t.Fatalf("start-up loaded the built-in prompt config:\n%s", errb.String())
	}
}
