package acceptance_test

// Invariants of every agent/session/update and workspace/applyEdit, checked at the end of each
// test that drives agentd through the fake editor.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd-dev/agentd/protocol"
)

var (
	updateKinds = []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update",
		"plan", "available_commands_update", "current_mode_update", "config_option_update", "session_info_update",
		"usage_update", "compaction_update", "notice"}
	toolKinds    = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}
	toolStatuses = []string{"pending", "in_progress", "completed", "failed"}
	severities   = []string{"info", "warning", "error"}
)

// checkInvariants returns every violation found in what agentd sent. A tool_call replayed by
// agent/session/load carries its final status (the contract's "tool calls with final status"),
// so the pending rule holds for live turns only: replayed names the sessions loaded.
func checkInvariants(frames []frame, replayed map[string]bool) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	final := map[string]string{} // toolCallId → final status seen
	for _, f := range frames {
		switch f.Method {
		case protocol.MethodSessionUpdate:
			var n struct {
				SessionID string         `json:"sessionId"`
				Update    map[string]any `json:"update"`
			}
			if err := json.Unmarshal(f.Params, &n); err != nil || n.SessionID == "" || n.Update == nil {
				badf("malformed agent/session/update %s", f.Params)
				continue
			}
			u := n.Update
			kind, _ := u["sessionUpdate"].(string)
			if !slices.Contains(updateKinds, kind) {
				badf("unknown sessionUpdate %q", kind)
			}
			switch kind {
			case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk":
				if id, _ := u["messageId"].(string); id == "" {
					badf("%s without messageId", kind)
				}
				if _, ok := u["content"].(map[string]any); !ok {
					badf("%s content is not a content block: %v", kind, u["content"])
				}
			case "tool_call", "tool_call_update":
				id, _ := u["toolCallId"].(string)
				if id == "" {
					badf("%s without toolCallId", kind)
				}
				if kind == "tool_call" {
					if u["status"] != "pending" && !replayed[n.SessionID] {
						badf("tool_call %s status %v, want pending", id, u["status"])
					}
					if !slices.Contains(toolKinds, fmt.Sprint(u["kind"])) {
						badf("tool_call %s kind %v not in the contract's list", id, u["kind"])
					}
				}
				if st, ok := u["status"].(string); ok {
					if !slices.Contains(toolStatuses, st) {
						badf("%s %s status %q", kind, id, st)
					}
					if prev := final[id]; prev != "" && n.SessionID != "" {
						badf("tool call %s changed status to %s after it ended %s", id, st, prev)
					}
					if st == "completed" || st == "failed" {
						final[id] = st
					}
				}
				locs, _ := u["locations"].([]any)
				for _, l := range locs {
					p, _ := obj(l, "path").(string)
					if !filepath.IsAbs(p) {
						badf("%s %s location path %q is not absolute", kind, id, p)
					}
					if line, ok := obj(l, "line").(float64); ok && line < 1 {
						badf("%s %s location line %v: lines in agent/* messages are 1-based", kind, id, line)
					}
				}
				content, _ := u["content"].([]any)
				for _, c := range content {
					allowed := map[any][]string{"diff": {"type", "path", "oldText", "newText", "_meta"},
						"content": {"type", "content", "_meta"}, "terminal": {"type", "terminalId", "_meta"}}[obj(c, "type")]
					for k := range c.(map[string]any) {
						if allowed != nil && !slices.Contains(allowed, k) {
							badf("%s %s: a %v content item has a key %q that ACP's shape lacks", kind, id, obj(c, "type"), k)
						}
					}
					switch obj(c, "type") {
					case "diff":
						if p, _ := obj(c, "path").(string); !filepath.IsAbs(p) {
							badf("diff path %q is not absolute", p)
						}
						if _, ok := obj(c, "newText").(string); !ok {
							badf("diff for %v without newText", obj(c, "path"))
						}
					case "content":
						if _, ok := obj(c, "content").(map[string]any); !ok {
							badf("tool content without a content block: %v", c)
						}
					case "terminal":
					default:
						badf("tool call content of type %v", obj(c, "type"))
					}
				}
			case "plan":
				entries, ok := u["entries"].([]any)
				if !ok {
					badf("plan without entries")
				}
				for _, e := range entries {
					if !slices.Contains([]any{"high", "medium", "low"}, obj(e, "priority")) ||
						!slices.Contains([]any{"pending", "in_progress", "completed"}, obj(e, "status")) {
						badf("plan entry %v", e)
					}
				}
			case "usage_update":
				if _, ok := u["used"].(float64); !ok {
					badf("usage_update without used: %v", u)
				}
				if _, ok := u["size"].(float64); !ok {
					badf("usage_update without size: %v", u)
				}
			case "notice":
				if !slices.Contains(severities, fmt.Sprint(u["severity"])) {
					badf("notice severity %v", u["severity"])
				}
				if t, _ := u["title"].(string); t == "" {
					badf("notice without a title: %v", u)
				}
			case "current_mode_update":
				if _, ok := u["currentModeId"].(string); !ok {
					badf("current_mode_update without currentModeId")
				}
			case "config_option_update":
				if _, ok := u["configOptions"].([]any); !ok {
					badf("config_option_update without configOptions")
				}
			}
		case protocol.MethodApplyEdit:
			var p struct {
				Edit struct {
					DocumentChanges []map[string]any `json:"documentChanges"`
				} `json:"edit"`
			}
			json.Unmarshal(f.Params, &p)
			for _, dc := range p.Edit.DocumentChanges {
				uri, _ := obj(dc, "textDocument", "uri").(string)
				if uri == "" {
					uri, _ = dc["uri"].(string)
				}
				if uri == "" {
					uri, _ = dc["newUri"].(string)
				}
				if !strings.HasPrefix(uri, "file://") {
					badf("applyEdit document change without a file:// URI: %v", dc)
				}
			}
		}
	}
	return bad
}
