package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/anthropic"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// A Messages answer with the web search server tool, as Anthropic documents it: the search
// call, its results, and text blocks carrying citations.
const searchAnswer = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[
{"type":"text","text":"I'll search."},
{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go 1.26 release"}},
{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[
 {"type":"web_search_result","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_content":"x","page_age":"2026"},
 {"type":"web_search_result","url":"https://go.dev/blog/go1.26","title":"Go 1.26 is released","encrypted_content":"y"}]},
{"type":"text","text":" Go 1.26 was released in February 2026.","citations":[{"type":"web_search_result_location","url":"https://go.dev/blog/go1.26","title":"Go 1.26 is released","encrypted_index":"z","cited_text":"..."}]}],
"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":20,"server_tool_use":{"web_search_requests":1}}}`

func TestWebSearchWithTheServerTool(t *testing.T) {
	var body map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != "ak" {
			http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no"}}`, 404)
			return
		}
		io.WriteString(w, searchAnswer)
	}))
	defer srv.Close()
	p, _ := anthropic.NewWithTransport(providers.Config{BaseURL: srv.URL, APIKey: "ak", Model: "claude-sonnet-4-5"}, providertest.Transport(&providertest.Sleeps{}))
	res, err := p.(providers.WebSearcher).WebSearch(context.Background(), providers.WebSearchRequest{System: "sys", Query: "go 1.26 release", MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "I'll search. Go 1.26 was released in February 2026." || len(res.Sources) != 2 || res.Sources[0].URL != "https://go.dev/doc/go1.26" {
		t.Fatalf("%+v", res)
	}
	tools, _ := body["tools"].([]any)
	tool, _ := tools[0].(map[string]any)
	if body["system"] != "sys" || tool["type"] != anthropic.WebSearchTool || body["stream"] != nil || !strings.Contains(body["model"].(string), "claude") {
		t.Fatalf("request %v", body)
	}
}
