package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func appendCases() []SessionNotification {
	old, nw := "a <b> & \"c\"\n", "d\u2028e\x01\xff"
	us := []SessionUpdate{
		{SessionUpdate: UpdateAgentMessageChunk, MessageID: "m1", Content: &ContentBlock{Type: "text", Text: "hi <there> & \t é 😀"}},
		{SessionUpdate: UpdateUserMessageChunk, MessageID: "m2", Content: &ContentBlock{Type: "resource", Resource: &EmbeddedResource{URI: "file:///a", Text: "x", MimeType: "text/plain"}, Meta: Meta{"k": 1}}},
		{SessionUpdate: UpdateAgentThoughtChunk, Content: &ContentBlock{Type: "image", MimeType: "image/png", Data: "AAAA", URI: "u", Name: "n"}},
		{SessionUpdate: UpdateToolCall, ToolCallID: "c1", Title: "Read <a>", Kind: KindRead, Status: StatusPending,
			RawInput: json.RawMessage(` { "path" : "a <b>\u2028" , "n": [1, 2.5e-7] } `), Locations: []ToolLocation{{Path: "/a"}, {Path: "/b", Line: 3}}},
		{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c1", Status: StatusCompleted, Title: "Edit a.txt",
			ToolContent: []ToolCallContent{{Type: "diff", Path: "/p/a.txt", OldText: &old, NewText: &nw}, {Type: "diff", Path: "/n"}, {Type: "content", Content: &ContentBlock{Type: "text", Text: "out"}}},
			RawOutput:   json.RawMessage(`"done"`)},
		{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c2", ToolContent: []ToolCallContent{}},
		{SessionUpdate: UpdatePlan, Entries: []PlanEntry{{Content: "one", Priority: "high", Status: "pending"}, {Content: "two", Priority: "low", Status: "completed"}}},
		{SessionUpdate: UpdateAvailableCommandsUpdate, AvailableCommands: []AvailableCommand{{Name: "compact", Description: "d"}, {Name: "x", Description: "y", Input: &struct {
			Hint string `json:"hint"`
		}{Hint: "h"}}}},
		{SessionUpdate: UpdateCurrentModeUpdate, CurrentModeID: "auto"},
		{SessionUpdate: UpdateConfigOptionUpdate, ConfigOptions: []ConfigOption{{ID: "mode", Name: "Mode", Category: "mode", Type: "select", CurrentValue: "ask",
			Options: []ConfigOptionValue{{Value: "ask", Name: "Ask"}, {Value: "auto", Name: "Auto", Description: "go"}}}, {ID: "m", Name: "M", Type: "select", Description: "dd", Meta: Meta{MetaPromptCapabilities: PromptCapabilities{Image: true}}},
			{ID: "answer_review", Name: "Review", Category: "model_config", Type: ConfigBoolean, CurrentValue: "true", Options: []ConfigOptionValue{{Value: "ignored"}}},
			{ID: "b", Name: "B", Type: ConfigBoolean, CurrentValue: "no"}}},
		{SessionUpdate: UpdateSessionInfoUpdate, SessionTitle: "Fix bug", UpdatedAt: "2026-01-01T00:00:00Z", Title: "ignored"},
		{SessionUpdate: UpdateUsageUpdate, Used: ptr(1200), Size: ptr(200000), Cost: &Cost{Amount: 0.0123, Currency: "USD"}},
		{SessionUpdate: UpdateUsageUpdate, Used: ptr(0), Size: ptr(-1), Cost: &Cost{Amount: 1e-9, Currency: "E<U>R"}},
		{SessionUpdate: UpdateUsageUpdate, Cost: &Cost{Amount: 3e22}},
		{SessionUpdate: UpdateCompactionUpdate, CompactionID: "k", Status: "completed", Summary: "s"},
		{SessionUpdate: UpdateNotice, Severity: SeverityWarning, NoticeTitle: "rate limited, retrying in 8 s", Description: "d", Title: "ignored", Meta: Meta{"agentd/x": []any{"a", 2.0}}},
		{},
	}
	out := make([]SessionNotification, len(us))
	for i, u := range us {
		out[i] = SessionNotification{SessionID: "s<1>", Update: u}
	}
	return out
}

func TestAppendSessionNotificationMatchesMarshal(t *testing.T) {
	for _, n := range appendCases() {
		want, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendSessionNotification(nil, &n)
		if !bytes.Equal(got, want) {
			t.Errorf("append:\n got %s\nwant %s", got, want)
		}
	}
}

func TestAppendRawInvalidBecomesString(t *testing.T) {
	n := SessionNotification{SessionID: "s", Update: SessionUpdate{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c", RawInput: json.RawMessage(`{"path":"a`)}}
	got := AppendSessionNotification(nil, &n)
	var back SessionNotification
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("not JSON: %s: %v", got, err)
	}
	var s string
	if err := json.Unmarshal(back.Update.RawInput, &s); err != nil || s != `{"path":"a` {
		t.Fatalf("rawInput = %s", back.Update.RawInput)
	}
}

func FuzzAppendSessionNotification(f *testing.F) {
	f.Add("s", "agent_message_chunk", "text", []byte(`{"a":1}`), 1.5)
	f.Add("\xff<", "tool_call", "\u2028\x00", []byte(`[1, "x"]`), 1e-9)
	f.Fuzz(func(t *testing.T, id, kind, text string, raw []byte, cost float64) {
		n := SessionNotification{SessionID: id, Update: SessionUpdate{SessionUpdate: kind, MessageID: text, Title: text,
			Content: &ContentBlock{Type: "text", Text: text}, ToolContent: []ToolCallContent{{Type: "diff", OldText: &text}},
			RawInput: raw, Cost: &Cost{Amount: cost, Currency: text}, NoticeTitle: text, SessionTitle: text}}
		got := AppendSessionNotification(nil, &n)
		if !json.Valid(got) {
			t.Fatalf("invalid JSON: %q", got)
		}
		if want, err := json.Marshal(n); err == nil && !bytes.Equal(got, want) {
			t.Fatalf("append:\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkAppendSessionNotification(b *testing.B) {
	n := SessionNotification{SessionID: "sess_0123456789", Update: SessionUpdate{SessionUpdate: UpdateAgentMessageChunk, MessageID: "msg_1",
		Content: &ContentBlock{Type: "text", Text: "Here is the next chunk of the model's answer, with a few words."}}}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendSessionNotification(buf[:0], &n)
	}
}
