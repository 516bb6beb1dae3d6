package openai

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func TestWebSearchWithASearchModel(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		io.WriteString(w, `{"id":"c","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",
"content":"Go 1.26 was released in February 2026 ([go.dev](https://go.dev/doc/go1.26)).",
"annotations":[{"type":"url_citation","url_citation":{"start_index":40,"end_index":80,"url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes"}}]}}]}`)
	}))
	defer srv.Close()
	p, _ := newProvider(providers.Config{ID: "gw", BaseURL: srv.URL + "/v1", Model: "gpt-4o-search-preview"}, &httpsse.Transport{Doer: srv.Client(), Sleep: (&providertest.Sleeps{}).Sleep})
	res, err := p.WebSearch(context.Background(), providers.WebSearchRequest{System: "sys", Query: "go 1.26"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 1 || res.Sources[0].URL != "https://go.dev/doc/go1.26" || res.Text == "" {
		t.Fatalf("%+v", res)
	}
	if body["web_search_options"] == nil || body["stream"] != nil || body["model"] != "gpt-4o-search-preview" {
		t.Fatalf("request %v", body)
	}
}
