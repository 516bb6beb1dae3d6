package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/tools/web"
)

type webSearchIn struct {
	Query string `json:"query" schema:"maxLength=1000"`
}

func (in webSearchIn) title() string {
	if strings.TrimSpace(in.Query) == "" {
		return ""
	}
	return "Search the web: " + clip.String(strings.TrimSpace(in.Query), 70, "…")
}

// WebSearch is the web_search tool: one request to the search-capable provider the user chose
// (Env.SearchWeb), whose answer and sources come back as data.
var WebSearch Tool = &typed[webSearchIn]{spec: Spec{Name: "web_search", Effect: EffectFetch, Kind: "fetch", Title: "Search the web", Needs: []Need{NeedWeb, NeedWebSearch}}, run: webSearch}

// maxAnswer bounds the answer the model reads.
const maxAnswer = 30000

func webSearch(ctx context.Context, env *Env, in webSearchIn) Result {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return Errorf("field query is empty; say what to look for")
	}
	if env.SearchWeb == nil {
		return Errorf("web_search is not available: no search provider is configured (webSearch.provider)")
	}
	if err := env.Permit(ctx, PermissionRequest{Title: "Search the web: " + clip.String(q, 200, "…"), Kind: "fetch"}); err != nil {
		return Errorf("%v", err)
	}
	ans, err := env.SearchWeb(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("cancelled")
		}
		return Errorf("web_search failed: %v", err)
	}
	var b strings.Builder
	// The answer is quoted, never mixed with agentd's own words: a closing tag in it is defused.
	b.WriteString("<web_search_result>\n")
	b.WriteString(strings.ReplaceAll(clip.String(strings.TrimSpace(ans.Text), maxAnswer, "\n…"), "</web_search_result", "<\\/web_search_result"))
	b.WriteString("\n</web_search_result>\n")
	if len(ans.Sources) > 0 {
		b.WriteString("Sources:\n")
		for _, s := range ans.Sources {
			title := web.CleanTitle(s.Title)
			if title == "" {
				title = s.URL
			}
			fmt.Fprintf(&b, "- %s [%s]\n", clip.String(title, 200, "…"), s.URL)
		}
	} else {
		b.WriteString("No sources were cited.\n")
	}
	urls := make([]string, len(ans.Sources))
	for i, s := range ans.Sources {
		urls[i] = s.URL
	}
	return Result{Output: b.String(), Raw: map[string]any{"sources": urls}}
}
