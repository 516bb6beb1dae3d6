package providertest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/providers")

// Golden compares the JSON document got with the golden file at path (indented, so diffs read
// well); with -update it rewrites the file instead.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	buf.WriteByte('\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s differs (rerun with -update if the change is intended)\ngot:\n%s\nwant:\n%s", path, buf.Bytes(), want)
	}
}

// ToolImages is a conversation whose tool results carry images (an MCP tool's screenshot): two
// calls, the first result with two images, the second with none, as the session builds them (the
// images after all the results, tied to theirs by ToolCallID).
func ToolImages() []providers.Message {
	return []providers.Message{
		{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "Take a screenshot and read the log."}}},
		{Role: providers.RoleAssistant, Parts: []providers.Part{
			{Type: providers.PartToolCall, ToolCallID: "call_shot", ToolName: "browser_screenshot", Args: json.RawMessage(`{}`)},
			{Type: providers.PartToolCall, ToolCallID: "call_log", ToolName: "read_file", Args: json.RawMessage(`{"path":"log.txt"}`)},
		}},
		{Role: providers.RoleUser, Parts: []providers.Part{
			{Type: providers.PartToolResult, ToolCallID: "call_shot", ToolName: "browser_screenshot", Text: "[image 1 of this result (image/png) follows]\n[image 2 of this result (image/jpeg) follows]"},
			{Type: providers.PartToolResult, ToolCallID: "call_log", ToolName: "read_file", Text: "all good"},
			{Type: providers.PartImage, ToolCallID: "call_shot", MimeType: "image/png", Data: []byte("\x89PNG\r\n")},
			{Type: providers.PartImage, ToolCallID: "call_shot", MimeType: "image/jpeg", Data: []byte("\xff\xd8\xff")},
		}},
	}
}
