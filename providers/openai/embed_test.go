package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
)

// embedServer answers /v1/embeddings with vector [index-of-text-in-the-whole-input, len(text)]
// for each input, in reverse order, after failing the first request with a 503.
type embedServer struct {
	mu      sync.Mutex
	batches [][]string
	dims    []int // the dimensions each batch asked for
	auth    []string
	failed  bool
}

func (s *embedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/embeddings" {
		http.NotFound(w, r)
		return
	}
	var req embedRequest
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &req); err != nil || req.Model != "text-embedding-3-small" {
		http.Error(w, `{"error":{"message":"bad request"}}`, 400)
		return
	}
	s.mu.Lock()
	if !s.failed {
		s.failed = true
		s.mu.Unlock()
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		return
	}
	s.batches = append(s.batches, req.Input)
	s.dims = append(s.dims, req.Dimensions)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	s.mu.Unlock()
	var data []string
	for i := len(req.Input) - 1; i >= 0; i-- {
		var n int
		fmt.Sscanf(req.Input[i], "text %d", &n)
		data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":[%d,%d]}`, i, n, len(req.Input[i])))
	}
	fmt.Fprintf(w, `{"object":"list","data":[%s],"model":"text-embedding-3-small"}`, strings.Join(data, ","))
}

func TestEmbedBatchesReordersAndRetries(t *testing.T) {
	srv := &embedServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	sleeps := &providertest.Sleeps{}
	p, err := newProvider(providers.Config{ID: "lan", BaseURL: ts.URL + "/v1", APIKey: "sk-test"}, &httpsse.Transport{Doer: ts.Client(), Sleep: sleeps.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = fmt.Sprintf("text %d", i)
	}
	vs, err := p.Embed(context.Background(), "text-embedding-3-small", texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs {
		if int(v[0]) != i || int(v[1]) != len(texts[i]) {
			t.Fatalf("vector %d = %v: not in input order", i, v)
		}
	}
	if len(srv.batches) != 3 || len(srv.batches[0]) != providers.EmbedBatchTexts || len(srv.batches[2]) != 150-2*providers.EmbedBatchTexts {
		t.Fatalf("batches of %d, %d, … (%d batches)", len(srv.batches[0]), len(srv.batches[1]), len(srv.batches))
	}
	for _, a := range srv.auth {
		if a != "Bearer sk-test" {
			t.Fatalf("authorization %q", a)
		}
	}
	if len(sleeps.All()) != 1 {
		t.Fatalf("slept %v: the 503 was not retried once", sleeps.All())
	}
	// text-embedding-3 vectors are asked at 768 dimensions (embedDimensions).
	for i, d := range srv.dims {
		if d != 768 {
			t.Fatalf("batch %d asked for %d dimensions, want 768", i, d)
		}
	}
}

// Only OpenAI's text-embedding-3 models are asked to shorten their vectors; another model (a
// local server's) is sent no dimensions parameter, which some servers refuse.
func TestEmbedDimensionsOnlyForTextEmbedding3(t *testing.T) {
	for model, want := range map[string]int{"text-embedding-3-small": 768, "text-embedding-3-large": 768, "nomic-embed-text": 0, "text-embedding-ada-002": 0} {
		if got := embedDimensions(model); got != want {
			t.Errorf("%s: %d dimensions, want %d", model, got, want)
		}
		b, _ := json.Marshal(embedRequest{Model: model, Input: []string{"x"}, Dimensions: embedDimensions(model)})
		if has := strings.Contains(string(b), `"dimensions"`); has != (want != 0) {
			t.Errorf("%s: request %s", model, b)
		}
	}
}

func TestEmbedRefusesAMalformedAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"too few":  `{"data":[{"index":0,"embedding":[1]}]}`,
		"repeated": `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`,
		"range":    `{"data":[{"index":0,"embedding":[1]},{"index":2,"embedding":[2]}]}`,
		"sizes":    `{"data":[{"index":0,"embedding":[1]},{"index":1,"embedding":[2,3]}]}`,
		"not json": `<html>`,
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
		p, _ := newProvider(providers.Config{ID: "lan", BaseURL: ts.URL + "/v1"}, &httpsse.Transport{Doer: ts.Client(), Sleep: (&providertest.Sleeps{}).Sleep})
		_, err := p.Embed(context.Background(), "m", []string{"a", "b"})
		ts.Close()
		var pe *providers.Error
		if !errors.As(err, &pe) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// TestEmbedNeedsAKeyAtOpenAI: OpenAI's own origin refuses a keyless request before it is sent,
// as chat does; the redacting wrapper keeps the Embedder.
func TestEmbedNeedsAKeyAtOpenAI(t *testing.T) {
	prov, err := New(providers.Config{ID: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = prov.(providers.Embedder).Embed(context.Background(), "text-embedding-3-small", []string{"x"})
	var pe *providers.Error
	if !errors.As(err, &pe) || pe.Kind != providers.ErrAuth {
		t.Fatalf("err = %v", err)
	}
	red := providers.Redact(prov, "sk-secret-key")
	_, embeds := red.(providers.Embedder)
	_, searches := red.(providers.WebSearcher)
	_, lists := red.(providers.ModelLister)
	if !embeds || !searches || !lists {
		t.Fatalf("Redact hid an interface: embeds %v searches %v lists %v", embeds, searches, lists)
	}
}
