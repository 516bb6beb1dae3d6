package session

import (
	"context"
	"fmt"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
)

// webSearchMaxTokens bounds the search model's answer.
const webSearchMaxTokens = 4096

// searchesWithAnyModel are the dialects whose every chat model can search (Gemini's Google
// Search grounding, Anthropic's web search tool); an openai provider searches only with a search
// model, so models.fast's provider is not taken for web_search unless it is one of these.
var searchesWithAnyModel = map[string]bool{"gemini": true, "anthropic": true}

// webSearchModel is the provider id and model web_search asks ("" model: that provider's own),
// id "" when none. webSearch.provider, when set, is the provider; its model is models.fast's
// when models.fast names that provider (or names a model alone and the session's provider,
// sessionProvider, is that provider), so the search runs on the fast model of the same
// provider. With webSearch.provider unset, models.fast's provider, when models.fast names one
// whose dialect searches with any model, is the provider, with models.fast's model. Both keys
// are the user's only: a project file can pick neither.
func webSearchModel(set config.Settings, sessionProvider string) (id, model string) {
	f := set.Fast()
	if id = set.WebSearch.Provider; id != "" {
		if f.Model != "" && (f.Provider == id || f.Provider == "" && sessionProvider == id) {
			return id, f.Model
		}
		return id, ""
	}
	if f.Provider != "" && searchesWithAnyModel[set.Providers[f.Provider].APIType] {
		return f.Provider, f.Model
	}
	return "", ""
}

// webSearcher is the Env.SearchWeb of a call: one request to the provider and model
// webSearchModel picks, with the prompt config's web_search texts and the current time (once
// more with the provider's own model when the fast one fails), or nil when the web is off or no
// provider searches.
func (t *turn) webSearcher() func(ctx context.Context, query string) (tools.WebAnswer, error) {
	if !t.set.Web.Enabled {
		return nil
	}
	t.s.mu.Lock()
	pid := t.s.providerID
	t.s.mu.Unlock()
	if pid == "" {
		pid = t.set.Provider
	}
	id, model := webSearchModel(t.set, pid)
	if id == "" {
		return nil
	}
	m := t.s.m
	return func(ctx context.Context, query string) (tools.WebAnswer, error) {
		prov, _, err := m.d.Providers.Provider(ctx, id)
		if err != nil {
			return tools.WebAnswer{}, err
		}
		ws, ok := prov.(providers.WebSearcher)
		if !ok {
			return tools.WebAnswer{}, fmt.Errorf("the provider %q cannot search the web; set webSearch.provider to a gemini, anthropic or openai provider", id)
		}
		now := m.now().Format("Monday 2006-01-02 15:04 MST (UTC-07:00)")
		req := providers.WebSearchRequest{
			Model:     model,
			System:    m.text("web_search.system", prompts.Run{"CURRENT_TIME": now}),
			Query:     m.text("web_search.request", prompts.Run{"QUERY": query}),
			MaxTokens: webSearchMaxTokens,
		}
		res, err := ws.WebSearch(ctx, req)
		if err != nil && model != "" && ctx.Err() == nil {
			m.log.Warn("web_search with models.fast failed, asking the provider's own model: " + err.Error())
			req.Model = ""
			res, err = ws.WebSearch(ctx, req)
		}
		if err != nil {
			return tools.WebAnswer{}, err
		}
		ans := tools.WebAnswer{Text: res.Text}
		for _, s := range res.Sources {
			ans.Sources = append(ans.Sources, tools.WebSource{Title: s.Title, URL: s.URL})
		}
		return ans, nil
	}
}
