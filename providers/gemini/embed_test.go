package gemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/providertest"
)

func TestBatchEmbedContents(t *testing.T) {
	var batches []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || r.Header.Get("x-goog-api-key") != "gk" {
			http.Error(w, `{"error":{"code":404,"message":"wrong path or key","status":"NOT_FOUND"}}`, 404)
			return
		}
		var req struct {
			Requests []struct {
				Model   string `json:"model"`
				Content struct {
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"content"`
			} `json:"requests"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		batches = append(batches, len(req.Requests))
		var out []string
		for _, rq := range req.Requests {
			if rq.Model != "models/gemini-embedding-001" {
				http.Error(w, `{"error":{"code":400,"message":"model","status":"INVALID_ARGUMENT"}}`, 400)
				return
			}
			var n int
			fmt.Sscanf(rq.Content.Parts[0].Text, "chunk %d", &n)
			out = append(out, fmt.Sprintf(`{"values":[%d,0.5]}`, n))
		}
		fmt.Fprintf(w, `{"embeddings":[%s]}`, strings.Join(out, ","))
	}))
	defer srv.Close()
	p, err := gemini.NewWithTransport(providers.Config{BaseURL: srv.URL, APIKey: "gk"}, providertest.Transport(&providertest.Sleeps{}))
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, 70)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk %d", i)
	}
	vs, err := p.(providers.Embedder).Embed(context.Background(), "models/gemini-embedding-001", texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if int(v[0]) != i || v[1] != 0.5 {
			t.Fatalf("vector %d = %v", i, v)
		}
	}
	if len(batches) != 2 || batches[0] != providers.EmbedBatchTexts {
		t.Fatalf("batches %v", batches)
	}
	_, err = p.(providers.Embedder).Embed(context.Background(), "other-model", texts[:1])
	if pe, ok := err.(*providers.Error); !ok || pe.Kind != providers.ErrNotFound {
		t.Fatalf("wrong model: %v", err)
	}
}
