package protocol

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSessionUpdateRoundTrip(t *testing.T) {
	old, nw := "a", "b"
	cases := []struct {
		u    SessionUpdate
		want string
	}{
		{SessionUpdate{SessionUpdate: UpdateAgentMessageChunk, MessageID: "m1", Content: &ContentBlock{Type: "text", Text: "hi"}},
			`{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"hi"}}`},
		{SessionUpdate{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c1", Status: StatusCompleted, Title: "Edit a.txt",
			ToolContent: []ToolCallContent{{Type: "diff", Path: "/p/a.txt", OldText: &old, NewText: &nw}}},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","content":[{"type":"diff","path":"/p/a.txt","oldText":"a","newText":"b"}],"title":"Edit a.txt"}`},
		{SessionUpdate{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c2", ToolContent: []ToolCallContent{
			{Type: "diff", Path: "/p/new.txt", NewText: &nw}, {Type: "content", Content: &ContentBlock{Type: "text", Text: "out"}}}},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c2","content":[{"type":"diff","path":"/p/new.txt","oldText":null,"newText":"b"},{"type":"content","content":{"type":"text","text":"out"}}]}`},
		{SessionUpdate{SessionUpdate: UpdateSessionInfoUpdate, SessionTitle: "Fix bug"},
			`{"sessionUpdate":"session_info_update","title":"Fix bug"}`},
		{SessionUpdate{SessionUpdate: UpdateNotice, Severity: SeverityWarning, NoticeTitle: "rate limited, retrying in 8 s"},
			`{"sessionUpdate":"notice","severity":"warning","title":"rate limited, retrying in 8 s"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.u)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("marshal:\n got %s\nwant %s", b, c.want)
		}
		var back SessionUpdate
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, c.u) {
			t.Errorf("round trip of %s:\n got %#v\nwant %#v", b, back, c.u)
		}
	}
}

// request_permission's toolCall is ACP's ToolCallUpdate: no sessionUpdate key, and it reads back.
func TestRequestPermissionToolCallShape(t *testing.T) {
	old, nw := "a", "b"
	p := RequestPermissionParams{SessionID: "s1", ToolCall: SessionUpdate{SessionUpdate: UpdateToolCallUpdate, ToolCallID: "c1", Title: "Edit a.txt",
		Kind: KindEdit, Status: StatusPending, ToolContent: []ToolCallContent{{Type: "diff", Path: "/p/a.txt", OldText: &old, NewText: &nw}}},
		Options: []PermissionOption{{OptionID: OptionAllowOnce, Name: "Allow once", Kind: "allow_once"}}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionId":"s1","options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"}],"toolCall":{"content":[{"type":"diff","path":"/p/a.txt","oldText":"a","newText":"b"}],"kind":"edit","status":"pending","title":"Edit a.txt","toolCallId":"c1"}}`
	if string(b) != want {
		t.Errorf("marshal:\n got %s\nwant %s", b, want)
	}
	var back RequestPermissionParams
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("round trip:\n got %#v\nwant %#v", back, p)
	}
}
