package acpdoor_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// scriptedProject lays out what both SDK clients drive agentd against: a home with the XDG
// directories, a project holding a.txt ("one") and notes.txt (whose disk text differs from the
// client's buffer), and user settings naming a replay provider with the model's responses,
// whose third is a run_program echo of echoed. It returns the project root and agentd's
// environment.
func scriptedProject(t *testing.T, title, echoed string, more ...any) (root string, env []string) {
	t.Helper()
	home := t.TempDir()
	root = filepath.Join(home, "project")
	write := func(p, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "a.txt"), "one\n")
	write(filepath.Join(root, "notes.txt"), "the text on disk\n")
	script, _ := json.Marshal(map[string]any{"title": title, "summary": "Summary.", "responses": append([]any{
		map[string]any{"toolCalls": []any{map[string]any{"id": "r1", "name": "read_file", "args": map[string]any{"path": "notes.txt"}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "e1", "name": "edit_file", "args": map[string]any{"path": "a.txt", "edits": []any{map[string]any{"old_text": "one", "new_text": "two"}}}}}},
		map[string]any{"toolCalls": []any{map[string]any{"id": "p1", "name": "run_program", "args": map[string]any{"command": []string{"echo", echoed}}}}},
		map[string]any{"text": "Done.", "stopReason": "end_turn"},
	}, more...)})
	write(filepath.Join(home, "replay.json"), string(script))
	// The program runs in the client's terminal (terminal/*), which agentd uses only for a
	// program it does not sandbox: the sandbox is off here, as a user who wants their editor's
	// terminal sets it.
	settings, _ := json.Marshal(map[string]any{
		"provider":  "r",
		"providers": map[string]any{"r": map[string]any{"apiType": "replay", "baseUrl": filepath.Join(home, "replay.json"), "model": "replay-model"}},
		"sandbox":   map[string]any{"mode": "off"},
	})
	write(filepath.Join(home, "config", "agentd", "config.json"), string(settings))
	env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "AGENTD_LOG=debug")
	return root, env
}
