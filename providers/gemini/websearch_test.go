package gemini_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func TestWebSearchWithGoogleSearchGrounding(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		if r.URL.Path != "/v1beta/models/gemini-2.5-flash:generateContent" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Go 1.26 was released "},{"text":"in February 2026."}]},
"groundingMetadata":{"webSearchQueries":["go 1.26 release"],"groundingChunks":[{"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/abc","title":"go.dev"}},{"web":{"uri":"https://vertexaisearch.cloud.google.com/grounding-api-redirect/abc","title":"go.dev"}}]}}]}`)
	}))
	defer srv.Close()
	p, _ := gemini.NewWithTransport(providers.Config{BaseURL: srv.URL, APIKey: "gk", Model: "gemini-2.5-flash"}, providertest.Transport(&providertest.Sleeps{}))
	res, err := p.(providers.WebSearcher).WebSearch(context.Background(), providers.WebSearchRequest{System: "sys", Query: "go 1.26 release"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Go 1.26 was released in February 2026." || len(res.Sources) != 1 || res.Sources[0].Title != "go.dev" {
		t.Fatalf("%+v", res)
	}
	tools, _ := body["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["google_search"] == nil || body["systemInstruction"] == nil {
		t.Fatalf("request %v", body)
	}
}
