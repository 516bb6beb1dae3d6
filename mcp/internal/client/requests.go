package client

import "context"

// maxPages bounds the pages of one listing: a server that hands out cursors forever is listed
// no further.
const maxPages = 100

// Tools lists the server's tools, page by page, at most max of them (and maxPages pages).
func (s *Session) Tools(ctx context.Context, max int) ([]Tool, error) {
	return list(max, func(cursor string) ([]Tool, string, error) {
		var r listToolsResult
		err := s.call(ctx, "tools/list", cursorParams(cursor), &r)
		return r.Tools, r.NextCursor, err
	})
}

// Prompts lists the server's prompts as Tools lists its tools.
func (s *Session) Prompts(ctx context.Context, max int) ([]Prompt, error) {
	return list(max, func(cursor string) ([]Prompt, string, error) {
		var r listPromptsResult
		err := s.call(ctx, "prompts/list", cursorParams(cursor), &r)
		return r.Prompts, r.NextCursor, err
	})
}

func cursorParams(cursor string) map[string]any {
	if cursor == "" {
		return map[string]any{}
	}
	return map[string]any{"cursor": cursor}
}

func list[T any](max int, page func(cursor string) ([]T, string, error)) ([]T, error) {
	var out []T
	cursor := ""
	for range maxPages {
		items, next, err := page(cursor)
		if err != nil {
			return out, err
		}
		for _, it := range items {
			if len(out) == max {
				return out, nil
			}
			out = append(out, it)
		}
		if next == "" || len(out) == max {
			break
		}
		cursor = next
	}
	return out, nil
}

// CallTool calls a tool. A tool's own failure is a result with IsError; an error is the
// protocol's or the connection's (or ctx's, after notifications/cancelled was sent).
func (s *Session) CallTool(ctx context.Context, name string, args map[string]any) (*CallToolResult, error) {
	if args == nil {
		args = map[string]any{} // the SDK's rule: never null on the wire
	}
	var r CallToolResult
	if err := s.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GetPrompt renders a prompt with its arguments.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	var r GetPromptResult
	if err := s.call(ctx, "prompts/get", map[string]any{"name": name, "arguments": args}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
