package acpdoor_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/internal/test/testbin"
)

// mcpTestServer builds package mcp's stdio test server (its ask and ask_link tools question the
// user) into a temporary directory.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcpserver")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentd-dev/agentd/mcp/internal/testserver").CombinedOutput(); err != nil {
		t.Fatalf("go build the MCP test server: %v\n%s", err, out)
	}
	return bin
}

// An MCP server's questions on the ACP door: a client that advertised
// clientCapabilities.elicitation gets ACP's elicitation/create, of the v1 schema's
// CreateElicitationRequest shape, tied to the session and the tool call, with the server's escape
// sequences gone; its answer is the tool's result. A client that did not advertise it is never
// sent one (ACP-CLIENTCAP-003) and the server's question is declined.
func TestACPElicitation(t *testing.T) {
	schema := loadSchema(t)
	bin, err := testbin.Agentd(false)
	if err != nil {
		t.Fatal(err)
	}
	server := mcpTestServer(t)
	responses := []any{
		map[string]any{"toolCalls": []any{map[string]any{"id": "q1", "name": "ask", "args": map[string]any{}}}},
		text("Asked."),
		map[string]any{"toolCalls": []any{map[string]any{"id": "q2", "name": "ask_link", "args": map[string]any{}}}},
		text("Linked."),
	}
	mcpServers := []any{map[string]any{"name": "deploy", "command": server, "args": []string{"-many", "0"}, "env": []any{}}}

	for _, advertised := range []bool{true, false} {
		t.Run(fmt.Sprintf("advertised=%v", advertised), func(t *testing.T) {
			root, env := kitProject(t, responses...)
			var questions []json.RawMessage
			editor := editorAnswers(t)
			k := &kit{startRaw(t, bin, root, env, func(method string, params json.RawMessage) (any, error) {
				if method != "elicitation/create" {
					return editor(method, params)
				}
				questions = append(questions, params)
				var p struct {
					Mode string `json:"mode"`
				}
				json.Unmarshal(params, &p)
				answer := map[string]any{"action": "accept"}
				if p.Mode == "form" {
					answer["content"] = map[string]any{"env": "prod", "note": "from the ACP client"}
				}
				b, _ := json.Marshal(answer)
				if err := schema.validate("CreateElicitationResponse", b); err != nil {
					t.Errorf("the test's own answer breaks the schema: %v", err)
				}
				return answer, nil
			}), root, env, schema}
			caps := map[string]any{}
			if advertised {
				caps["elicitation"] = map[string]any{"form": map[string]any{}, "url": map[string]any{}}
			}
			k.init(caps)
			sid, _ := k.newSession(map[string]any{"mcpServers": mcpServers})
			for _, p := range []string{"Ask where to deploy.", "Ask me to connect."} {
				if a := k.prompt(sid, textBlock(p)); a.Error != nil || stopReason(a) != "end_turn" {
					t.Fatalf("prompt %q = %s %+v", p, a.Result, a.Error)
				}
			}
			results := completedOutputs(k.lines)
			if !advertised {
				if len(questions) != 0 {
					t.Errorf("ACP-CLIENTCAP-003: a client that did not advertise elicitation was asked: %s", questions)
				}
				if !strings.Contains(results, "decline null") || strings.Contains(results, "accept") {
					t.Errorf("the questions were not declined: tool results %q", results)
				}
				k.finish()
				return
			}
			if len(questions) != 2 {
				t.Fatalf("asked %d questions, want 2: %s", len(questions), questions)
			}
			for i, q := range questions {
				var p struct {
					SessionID       string                     `json:"sessionId"`
					ToolCallID      string                     `json:"toolCallId"`
					Mode            string                     `json:"mode"`
					Message         string                     `json:"message"`
					URL             string                     `json:"url"`
					ElicitationID   string                     `json:"elicitationId"`
					RequestedSchema map[string]json.RawMessage `json:"requestedSchema"`
					Meta            map[string]string          `json:"_meta"`
				}
				if err := json.Unmarshal(q, &p); err != nil {
					t.Fatal(err)
				}
				if err := schema.validate("CreateElicitationRequest", q); err != nil {
					t.Errorf("question %d does not match CreateElicitationRequest: %v\n%s", i, err, q)
				}
				if p.SessionID != sid || p.ToolCallID == "" || !strings.Contains(string(linesText(k.lines)), `"toolCallId":"`+p.ToolCallID+`"`) {
					t.Errorf("question %d is not tied to the session and a tool call it reported: %s", i, q)
				}
				if p.Meta["agentd/mcpServer"] != "deploy" {
					t.Errorf("question %d does not name its server: %s", i, q)
				}
				if strings.ContainsAny(p.Message, "\x1b\x07") || strings.Contains(string(q), `\u001b`) {
					t.Errorf("question %d carries an escape sequence of the server (message or a field title): %s", i, q)
				}
			}
			var first, second struct {
				Mode            string         `json:"mode"`
				Message         string         `json:"message"`
				URL             string         `json:"url"`
				ElicitationID   string         `json:"elicitationId"`
				RequestedSchema map[string]any `json:"requestedSchema"`
			}
			json.Unmarshal(questions[0], &first)
			json.Unmarshal(questions[1], &second)
			if first.Mode != "form" || !strings.HasPrefix(first.Message, "Deploy where?") || first.RequestedSchema["properties"] == nil {
				t.Errorf("the form question = %s", questions[0])
			}
			if second.Mode != "url" || second.URL != "https://auth.example/connect?x=1" || second.ElicitationID != "link-1" {
				t.Errorf("the link question = %s", questions[1])
			}
			if !strings.Contains(results, `accept {"env":"prod","note":"from the ACP client"}`) {
				t.Errorf("the form's answer did not reach the tool's result: %q", results)
			}
			if !strings.Contains(results, "accept null") {
				t.Errorf("the link's answer did not reach the tool's result: %q", results)
			}
			// Every elicitation/create agentd sent is checked against the schema, too.
			k.finish()
		})
	}
}

func linesText(lines [][]byte) []byte {
	var b []byte
	for _, l := range lines {
		b = append(append(b, l...), '\n')
	}
	return b
}

// completedOutputs joins the text of the completed tool calls' content among lines.
func completedOutputs(lines [][]byte) string {
	var out []string
	for _, line := range lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					Status        string `json:"status"`
					Content       []struct {
						Content struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.Method != "session/update" || m.Params.Update.SessionUpdate != "tool_call_update" || m.Params.Update.Status != "completed" {
			continue
		}
		for _, c := range m.Params.Update.Content {
			out = append(out, c.Content.Text)
		}
	}
	return strings.Join(out, "\n")
}
