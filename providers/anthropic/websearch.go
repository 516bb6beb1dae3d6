package anthropic

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

var _ providers.WebSearcher = (*Provider)(nil)

// WebSearchTool is the server tool's type: Anthropic runs the searches itself.
const WebSearchTool = "web_search_20250305"

// WebSearch implements providers.WebSearcher with one non-streaming Messages request that offers
// the web search server tool; the sources are the search results and the citations.
func (p *Provider) WebSearch(ctx context.Context, req providers.WebSearchRequest) (providers.WebSearchResult, error) {
	var res providers.WebSearchResult
	model := req.Model
	if model == "" {
		model = p.cfg.Model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 4096
	}
	body := map[string]any{
		"model":      model,
		"max_tokens": maxTokens,
		"messages":   []any{map[string]any{"role": "user", "content": req.Query}},
		"tools":      []any{map[string]any{"type": WebSearchTool, "name": "web_search", "max_uses": 5}},
	}
	if req.System != "" {
		body["system"] = req.System
	}
	b, _ := json.Marshal(body)
	out, perr := p.tr.Fetch(ctx, &httpsse.Call{Provider: name, Method: http.MethodPost, URL: p.base + "/v1/messages", Header: p.header(nil), Body: b})
	if perr != nil {
		return res, perr
	}
	var resp struct {
		Content []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Content   json.RawMessage `json:"content"`
			Citations []struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			} `json:"citations"`
		} `json:"content"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return res, providers.ProtocolError(name, "messages: "+err.Error())
	}
	var text strings.Builder
	var cited []providers.WebSource
	for _, c := range resp.Content {
		switch c.Type {
		case "text":
			text.WriteString(c.Text)
			for _, ct := range c.Citations {
				cited = append(cited, providers.WebSource{Title: ct.Title, URL: ct.URL})
			}
		case "web_search_tool_result":
			var results []struct {
				Type  string `json:"type"`
				URL   string `json:"url"`
				Title string `json:"title"`
			}
			if json.Unmarshal(c.Content, &results) == nil {
				for _, r := range results {
					if r.Type == "web_search_result" {
						cited = append(cited, providers.WebSource{Title: r.Title, URL: r.URL})
					}
				}
			}
		}
	}
	res.Text = text.String()
	for _, s := range cited {
		res.AddSource(s.Title, s.URL)
	}
	return res, nil
}
