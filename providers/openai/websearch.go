package openai

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

var _ providers.WebSearcher = (*Provider)(nil)

// WebSearch implements providers.WebSearcher with one non-streaming chat completion of a search
// model (OpenAI's gpt-4o-search-preview and the like, or a gateway's search model) with
// web_search_options; the sources are the message's url_citation annotations.
func (p *Provider) WebSearch(ctx context.Context, req providers.WebSearchRequest) (providers.WebSearchResult, error) {
	var res providers.WebSearchResult
	model := strings.TrimSpace(req.Model)
	if model == "" {
		model = strings.TrimSpace(p.cfg.Model)
	}
	if model == "" {
		return res, &providers.Error{Kind: providers.ErrInvalidRequest, Message: "No model is set for " + p.who + "; set the provider's model to a search model."}
	}
	if e := p.keyMissing(); e != nil {
		return res, e
	}
	var msgs []any
	if req.System != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": req.System})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": req.Query})
	body := map[string]any{"model": model, "messages": msgs, "web_search_options": map[string]any{}}
	if req.MaxTokens > 0 {
		body["max_completion_tokens"] = req.MaxTokens
	}
	b, _ := json.Marshal(body)
	out, perr := p.tr.Fetch(ctx, &httpsse.Call{Provider: p.who, URL: p.base + "/chat/completions", Header: p.header(false), Body: b, Classify: p.classify})
	if perr != nil {
		return res, perr
	}
	var resp struct {
		Choices []struct {
			Message struct {
				Content     string `json:"content"`
				Annotations []struct {
					Type        string `json:"type"`
					URLCitation struct {
						URL   string `json:"url"`
						Title string `json:"title"`
					} `json:"url_citation"`
				} `json:"annotations"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || len(resp.Choices) == 0 {
		return res, providers.ProtocolError(p.who, "chat completion without a choice")
	}
	m := resp.Choices[0].Message
	res.Text = m.Content
	for _, a := range m.Annotations {
		if a.Type == "url_citation" {
			res.AddSource(a.URLCitation.Title, a.URLCitation.URL)
		}
	}
	return res, nil
}
