package session

import "testing"

// writtenToolCall finds a call written out as text, and only that: prose naming a tool, JSON
// that is not a call, or a call of a tool the turn does not have are not one.
func TestWrittenToolCall(t *testing.T) {
	isTool := func(n string) bool { return n == "read_file" || n == "run_program" }
	for text, want := range map[string]string{
		`{"name": "read_file", "arguments": {"path": "a.go"}}`:                               "read_file",
		"Let me look.\n{\"tool\": \"run_program\", \"args\": {\"command\": [\"ls\"]}}":       "run_program",
		`{"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}}`: "read_file",
		"<tool_call>\n{\"name\": \"read_file\", \"arguments\": {}}\n</tool_call>":            "read_file",
		"<tool_call>read_file path=a.go</tool_call>":                                         "read_file",
		"Call read_file with {\"path\": \"a.go\"} to see it.":                                "",
		`{"name": "read_file"}`:                          "",
		`{"name": "delete_everything", "arguments": {}}`: "",
		"No tools {here} at all { unbalanced":            "",
		// Quoted calls (a README the model echoes) are no call of the model's.
		"Let me look.\n```json\n{\"tool\": \"run_program\", \"args\": {\"command\": [\"ls\"]}}\n```":     "",
		"The README:\n~~~\n<tool_call>{\"name\": \"run_program\", \"arguments\": {}}</tool_call>\n~~~\n": "",
		"> {\"name\": \"read_file\", \"arguments\": {\"path\": \"a.go\"}}":                               "",
		"Run `<tool_call>{\"name\": \"run_program\", \"arguments\": {}}</tool_call>` to build.":          "",
		"```\nquoted\n```\n{\"name\": \"read_file\", \"arguments\": {}}":                                 "read_file",
	} {
		got, ok := writtenToolCall(unquoted(text), isTool)
		if got != want || ok != (want != "") {
			t.Errorf("writtenToolCall(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
}
