package gemini

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

var _ providers.WebSearcher = (*Provider)(nil)

// WebSearch implements providers.WebSearcher with one generateContent request that carries the
// google_search tool (Grounding with Google Search); the sources are the grounding chunks.
func (p *Provider) WebSearch(ctx context.Context, req providers.WebSearchRequest) (providers.WebSearchResult, error) {
	var res providers.WebSearchResult
	model := strings.TrimPrefix(req.Model, "models/")
	if model == "" {
		model = strings.TrimPrefix(p.cfg.Model, "models/")
	}
	if model == "" {
		return res, &providers.Error{Kind: providers.ErrInvalidRequest, Message: "No Gemini model is configured for web_search; set the provider's model."}
	}
	body := map[string]any{
		"contents": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": req.Query}}}},
		"tools":    []any{map[string]any{"google_search": map[string]any{}}},
	}
	if req.System != "" {
		body["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": req.System}}}
	}
	if req.MaxTokens > 0 {
		body["generationConfig"] = map[string]any{"maxOutputTokens": req.MaxTokens}
	}
	b, _ := json.Marshal(body)
	out, perr := p.tr.Fetch(ctx, &httpsse.Call{Provider: name, Method: http.MethodPost,
		URL: p.base + "/v1beta/models/" + url.PathEscape(model) + ":generateContent", Header: p.header(), Body: b})
	if perr != nil {
		return res, perr
	}
	var resp struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text    string `json:"text"`
					Thought bool   `json:"thought"`
				} `json:"parts"`
			} `json:"content"`
			GroundingMetadata struct {
				GroundingChunks []struct {
					Web struct {
						URI   string `json:"uri"`
						Title string `json:"title"`
					} `json:"web"`
				} `json:"groundingChunks"`
			} `json:"groundingMetadata"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return res, providers.ProtocolError(name, "generateContent: "+err.Error())
	}
	if len(resp.Candidates) == 0 {
		return res, &providers.Error{Kind: providers.ErrContentFilter, Message: "Gemini returned no answer to the search (the query may have been blocked)."}
	}
	c := resp.Candidates[0]
	var text strings.Builder
	for _, part := range c.Content.Parts {
		if !part.Thought {
			text.WriteString(part.Text)
		}
	}
	res.Text = text.String()
	for _, g := range c.GroundingMetadata.GroundingChunks {
		res.AddSource(g.Web.Title, g.Web.URI)
	}
	return res, nil
}
