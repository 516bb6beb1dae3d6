package session

import (
	"context"
	"fmt"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
)

// webSearchMaxTokens bounds the search model's answer.
const webSearchMaxTokens = 4096

// webSearcher is the Env.SearchWeb of a call: one request to the settings' webSearch.provider
// with the prompt config's web_search texts and the current time, or nil when the web is off or
// no search provider is set.
func (t *turn) webSearcher() func(ctx context.Context, query string) (tools.WebAnswer, error) {
	id := t.set.WebSearch.Provider
	if id == "" || !t.set.Web.Enabled {
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
		res, err := ws.WebSearch(ctx, providers.WebSearchRequest{
			System:    m.text("web_search.system", prompts.Run{"CURRENT_TIME": now}),
			Query:     m.text("web_search.request", prompts.Run{"QUERY": query}),
			MaxTokens: webSearchMaxTokens,
		})
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
