package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

func offeredNames(req *providers.Request) []string {
	var out []string
	for _, s := range req.Tools {
		out = append(out, s.Name)
	}
	return out
}

// TestWebToolsOfferedOnlyWhenEnabled: with web.enabled false (the default) the model is neither
// declared web_fetch nor told of it in the system prompt; turning it on offers it from the next
// turn, and turning it off again takes it away.
func TestWebToolsOfferedOnlyWhenEnabled(t *testing.T) {
	h := newHarness(t, reply{events: textReply("one")}, reply{events: textReply("two")}, reply{events: textReply("three")})
	h.tools = tools.Default()
	h.m = h.manager()
	h.newSession()
	h.prompt("first")
	h.set.Web.Enabled = true
	h.prompt("second")
	h.set.Web.Enabled = false
	h.prompt("third")
	var reqs []*providers.Request
	for _, r := range h.prov.requests() {
		if len(r.Tools) > 0 {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) != 3 {
		t.Fatalf("%d turn requests", len(reqs))
	}
	for i, want := range []bool{false, true, false} {
		names := offeredNames(reqs[i])
		if got := slices.Contains(names, "web_fetch"); got != want {
			t.Errorf("turn %d: web_fetch offered %v, want %v (%v)", i+1, got, want, names)
		}
		if got := strings.Contains(reqs[i].System, "web_fetch"); got != want {
			t.Errorf("turn %d: system prompt names web_fetch: %v, want %v", i+1, got, want)
		}
		if !slices.Contains(names, "read_file") {
			t.Errorf("turn %d: read_file not offered", i+1)
		}
	}
	if reqs[0].System != reqs[2].System {
		t.Error("the system prompt changed with the web turned off again: the prompt cache misses")
	}
}

// searchingProvider is the fake chat provider that can also search the web.
type searchingProvider struct {
	*fakeProvider
	reqs []providers.WebSearchRequest
}

func (p *searchingProvider) WebSearch(ctx context.Context, req providers.WebSearchRequest) (providers.WebSearchResult, error) {
	p.reqs = append(p.reqs, req)
	return providers.WebSearchResult{Text: "Go 1.26 is current.", Sources: []providers.WebSource{{Title: "Go", URL: "https://go.dev/"}}}, nil
}

// TestWebSearchNeedsTheWebAndAProvider: web_search is offered only with web.enabled and
// webSearch.provider both set; its one request carries the prompt config's web_search texts
// with the current time, and the answer and its sources reach the model.
func TestWebSearchNeedsTheWebAndAProvider(t *testing.T) {
	h := newHarness(t,
		reply{events: textReply("one")},
		reply{events: callsReply(tc{"c1", "web_search", `{"query":"latest go"}`})},
		reply{events: textReply("done")})
	prov := &searchingProvider{fakeProvider: h.prov}
	h.tools = tools.Default()
	h.set.Mode = ModeAuto
	h.set.Web.Enabled = true
	h.m = searchingManager(h, prov)
	h.newSession()
	h.prompt("first")
	h.set.WebSearch.Provider = "fake"
	h.prompt("second")
	var turns []*providers.Request
	for _, r := range h.prov.requests() {
		if len(r.Tools) > 0 {
			turns = append(turns, r)
		}
	}
	if slices.Contains(offeredNames(turns[0]), "web_search") || !slices.Contains(offeredNames(turns[1]), "web_search") {
		t.Fatalf("offered %v then %v", offeredNames(turns[0]), offeredNames(turns[1]))
	}
	if len(prov.reqs) != 1 || prov.reqs[0].Query != "latest go" || !strings.Contains(prov.reqs[0].System, "Current time: ") || !strings.Contains(prov.reqs[0].System, "web search of a coding agent") {
		t.Fatalf("search requests %+v", prov.reqs)
	}
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "Go 1.26 is current.") || !strings.Contains(res[0].Text, "- Go [https://go.dev/]") {
		t.Fatalf("results %+v", res)
	}
}

// TestVariantFoundWithoutBuildingARegistry: the variant of settings already seen comes from the
// cache, the same one variantOf gives, without the registry Offered builds (one per model
// request before: 17 allocations with agentd's tools, the map of a new registry).
func TestVariantFoundWithoutBuildingARegistry(t *testing.T) {
	m := NewManager(Deps{Tools: tools.Default(), Settings: func() config.Settings { return config.Settings{} }})
	defer m.Shutdown(context.Background())
	for _, set := range []config.Settings{{}, {Web: config.Web{Enabled: true}}} {
		v := m.variant(set)
		if want := m.variantOf(m.d.Tools.Offered(needsMet(set))); v != want {
			t.Fatalf("web %v: variant differs from variantOf(Offered)", set.Web.Enabled)
		}
		if again := m.variant(set); again != v {
			t.Fatalf("web %v: a second variant was built", set.Web.Enabled)
		}
		if n := testing.AllocsPerRun(20, func() { m.variant(set) }); n > 2 {
			t.Errorf("web %v: variant allocates %.0f times per call, want at most 2", set.Web.Enabled, n)
		}
	}
}

// TestWebSearchModelRule: which provider and model web_search asks, from webSearch.provider and
// models.fast; an openai models.fast provider is not taken (only its search models search).
func TestWebSearchModelRule(t *testing.T) {
	provs := map[string]config.ProviderSettings{"g": {APIType: "gemini"}, "a": {APIType: "anthropic"}, "o": {APIType: "openai"}}
	fast := func(p, m string) map[string]config.ModelSettings {
		return map[string]config.ModelSettings{config.FastModelKey: {Provider: p, Model: m}}
	}
	for _, c := range []struct {
		name      string
		search    string
		models    map[string]config.ModelSettings
		session   string
		id, model string
	}{
		{"no search, no fast", "", nil, "g", "", ""},
		{"search alone", "g", nil, "g", "g", ""},
		{"fast on the search provider", "g", fast("g", "flash"), "a", "g", "flash"},
		{"fast on another provider", "g", fast("a", "haiku"), "g", "g", ""},
		{"fast model alone, session on the search provider", "g", fast("", "flash"), "g", "g", "flash"},
		{"fast model alone, session elsewhere", "g", fast("", "haiku"), "a", "g", ""},
		{"no search, fast on gemini", "", fast("g", "flash"), "a", "g", "flash"},
		{"no search, fast on anthropic", "", fast("a", "haiku"), "g", "a", "haiku"},
		{"no search, fast on openai", "", fast("o", "mini"), "g", "", ""},
		{"no search, fast model alone", "", fast("", "flash"), "g", "", ""},
		{"no search, fast on an undefined provider", "", fast("x", "m"), "g", "", ""},
	} {
		set := config.Settings{Providers: provs, WebSearch: config.WebSearch{Provider: c.search}, Models: c.models}
		if id, model := webSearchModel(set, c.session); id != c.id || model != c.model {
			t.Errorf("%s: %q %q, want %q %q", c.name, id, model, c.id, c.model)
		}
	}
}

// TestWebSearchThroughTheFastModel: with webSearch.provider unset, web_search is offered through
// models.fast's gemini provider and asks its fast model; with web.enabled off it is not offered
// whatever models.fast says; a fast model's failure is asked once more with the provider's own.
func TestWebSearchThroughTheFastModel(t *testing.T) {
	h := newHarness(t,
		reply{events: textReply("one")},
		reply{events: callsReply(tc{"c1", "web_search", `{"query":"latest go"}`})},
		reply{events: textReply("done")})
	prov := &searchingProvider{fakeProvider: h.prov}
	h.tools = tools.Default()
	h.set.Mode = ModeAuto
	h.set.Providers = map[string]config.ProviderSettings{"quick": {APIType: "gemini"}}
	h.set.Models = map[string]config.ModelSettings{config.FastModelKey: {Provider: "quick", Model: "gemini-flash-lite"}}
	h.m = searchingManager(h, prov)
	h.newSession()
	h.prompt("first") // web.enabled off: models.fast does not turn web_search on
	h.set.Web.Enabled = true
	h.prompt("second")
	var turns []*providers.Request
	for _, r := range h.prov.requests() {
		if len(r.Tools) > 0 {
			turns = append(turns, r)
		}
	}
	if slices.Contains(offeredNames(turns[0]), "web_search") || !slices.Contains(offeredNames(turns[1]), "web_search") {
		t.Fatalf("offered %v then %v", offeredNames(turns[0]), offeredNames(turns[1]))
	}
	if len(prov.reqs) != 1 || prov.reqs[0].Model != "gemini-flash-lite" || prov.reqs[0].Query != "latest go" {
		t.Fatalf("search requests %+v", prov.reqs)
	}
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "Go 1.26 is current.") {
		t.Fatalf("results %+v", res)
	}
}

// failingFastSearcher fails a search with a model named and answers with the provider's own.
type failingFastSearcher struct{ searchingProvider }

func (p *failingFastSearcher) WebSearch(ctx context.Context, req providers.WebSearchRequest) (providers.WebSearchResult, error) {
	p.reqs = append(p.reqs, req)
	if req.Model != "" {
		return providers.WebSearchResult{}, errors.New("model not found")
	}
	return providers.WebSearchResult{Text: "Go 1.26 is current."}, nil
}

func TestWebSearchFastModelFailureAsksTheProvidersOwn(t *testing.T) {
	h := newHarness(t,
		reply{events: callsReply(tc{"c1", "web_search", `{"query":"latest go"}`})},
		reply{events: textReply("done")})
	prov := &failingFastSearcher{searchingProvider{fakeProvider: h.prov}}
	h.tools = tools.Default()
	h.set.Mode = ModeAuto
	h.set.Web.Enabled = true
	h.set.WebSearch.Provider = "search"
	h.set.Models = map[string]config.ModelSettings{config.FastModelKey: {Provider: "search", Model: "flash"}}
	h.m = searchingManager(h, prov)
	h.newSession()
	h.prompt("search")
	if len(prov.reqs) != 2 || prov.reqs[0].Model != "flash" || prov.reqs[1].Model != "" {
		t.Fatalf("search requests %+v", prov.reqs)
	}
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].Text, "Go 1.26 is current.") {
		t.Fatalf("results %+v", res)
	}
}

// searchingManager is h's manager with the default tools over prov, a provider that searches.
func searchingManager(h *harness, prov providers.Provider) *Manager {
	return NewManager(Deps{Client: h.client, Workspaces: func(string, *workspace.Roots) workspace.Workspace { return h.ws },
		Providers: fakeSource{p: prov}, Tools: h.tools, Settings: func() config.Settings { return h.set }, StateDir: h.state})
}
