package providers

import (
	"context"
	"strings"
)

// WebSearcher answers a question with the web: a dialect whose API can search (Gemini's Google
// Search grounding, Anthropic's web search server tool, an OpenAI-compatible search model)
// implements it. One call is one request; the answer comes with the pages it cites.
type WebSearcher interface {
	WebSearch(ctx context.Context, req WebSearchRequest) (WebSearchResult, error)
}

// WebSearchRequest is one search: the instructions (the prompt config's web_search.system) and
// the query; Model "" means the provider's model.
type WebSearchRequest struct {
	Model     string
	System    string
	Query     string
	MaxTokens int
}

// WebSearchResult is the answer and its sources, each URL once, in the order first cited.
type WebSearchResult struct {
	Text    string
	Sources []WebSource
}

// WebSource is one cited page.
type WebSource struct {
	Title string
	URL   string
}

// AddSource appends a source unless its URL is empty or already listed.
func (r *WebSearchResult) AddSource(title, url string) {
	url = strings.TrimSpace(url)
	if url == "" {
		return
	}
	for _, s := range r.Sources {
		if s.URL == url {
			return
		}
	}
	r.Sources = append(r.Sources, WebSource{Title: strings.TrimSpace(title), URL: url})
}
