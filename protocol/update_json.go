package protocol

import "encoding/json"

// MarshalJSON writes the kind-dependent keys ("content", "title") that the flat struct keeps in
// separate fields.
func (u SessionUpdate) MarshalJSON() ([]byte, error) {
	type plain SessionUpdate
	out := struct {
		plain
		Content any    `json:"content,omitempty"`
		Title   string `json:"title,omitempty"`
	}{plain: plain(u)}
	switch u.SessionUpdate {
	case UpdateToolCall, UpdateToolCallUpdate:
		if u.ToolContent != nil {
			out.Content = u.ToolContent
		}
		out.Title = u.Title
	case UpdateSessionInfoUpdate:
		out.Title = u.SessionTitle
	case UpdateNotice:
		out.Title = u.NoticeTitle
	default:
		if u.Content != nil {
			out.Content = u.Content
		}
		out.Title = u.Title
	}
	return json.Marshal(out)
}

// UnmarshalJSON is the inverse of MarshalJSON.
func (u *SessionUpdate) UnmarshalJSON(data []byte) error {
	type plain SessionUpdate
	var in struct {
		plain
		Content json.RawMessage `json:"content"`
		Title   string          `json:"title"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*u = SessionUpdate(in.plain)
	switch u.SessionUpdate {
	case UpdateToolCall, UpdateToolCallUpdate:
		u.Title = in.Title
		if len(in.Content) > 0 && string(in.Content) != "null" {
			if err := json.Unmarshal(in.Content, &u.ToolContent); err != nil {
				return err
			}
		}
	case UpdateSessionInfoUpdate:
		u.SessionTitle = in.Title
	case UpdateNotice:
		u.NoticeTitle = in.Title
	default:
		u.Title = in.Title
		if len(in.Content) > 0 && string(in.Content) != "null" {
			u.Content = new(ContentBlock)
			if err := json.Unmarshal(in.Content, u.Content); err != nil {
				return err
			}
		}
	}
	return nil
}

// MarshalJSON writes oldText for a diff only, where null means a new file; ACP's other tool
// call content kinds ({type:"content", content}) have no such key.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	type plain ToolCallContent
	if c.Type == "diff" {
		return json.Marshal(plain(c))
	}
	return json.Marshal(struct {
		plain
		OldText *string `json:"oldText,omitempty"` // shadows plain's, which is never omitted
	}{plain: plain(c)})
}

// MarshalJSON writes toolCall as ACP's ToolCallUpdate: the fields of a tool_call_update without
// the sessionUpdate discriminator, which belongs to agent/session/update, not to this object.
func (p RequestPermissionParams) MarshalJSON() ([]byte, error) {
	tc := p.ToolCall
	tc.SessionUpdate = UpdateToolCallUpdate // so content is written as a tool call's list
	b, err := json.Marshal(tc)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	delete(fields, "sessionUpdate")
	type plain RequestPermissionParams
	return json.Marshal(struct {
		plain
		ToolCall map[string]json.RawMessage `json:"toolCall"` // shadows plain's
	}{plain: plain(p), ToolCall: fields})
}

// UnmarshalJSON is the inverse of MarshalJSON; it also takes a toolCall that carries the
// discriminator.
func (p *RequestPermissionParams) UnmarshalJSON(data []byte) error {
	type plain RequestPermissionParams
	var in struct {
		plain
		ToolCall map[string]json.RawMessage `json:"toolCall"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*p = RequestPermissionParams(in.plain)
	if in.ToolCall == nil {
		return nil
	}
	in.ToolCall["sessionUpdate"] = json.RawMessage(`"tool_call_update"`)
	b, err := json.Marshal(in.ToolCall)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, &p.ToolCall)
}
