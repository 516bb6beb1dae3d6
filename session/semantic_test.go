package session

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// embeddingProvider is the fake chat provider with an embeddings endpoint: each word of a text
// adds 1 to a bucket of its hash.
type embeddingProvider struct {
	*fakeProvider
	mu     sync.Mutex
	models []string
	texts  int
}

func (p *embeddingProvider) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	p.mu.Lock()
	p.models = append(p.models, model)
	p.texts += len(texts)
	p.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 256)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if len(w) > 3 && w != "file" && w != "package" && w != "func" {
				h := fnv.New32a()
				h.Write([]byte(w))
				v[h.Sum32()%256]++
			}
		}
		out[i] = v
	}
	return out, nil
}

// failingEmbedder is an embedding provider whose every call fails the same way.
type failingEmbedder struct{ *fakeProvider }

func (failingEmbedder) Embed(context.Context, string, []string) ([][]float32, error) {
	return nil, errors.New("no API key for https://api.openai.com")
}

// TestIndexFailureIsToldOnce: a build that fails the same way for every new session (no key for
// the embedding model) warns once, not at every session/new.
func TestIndexFailureIsToldOnce(t *testing.T) {
	h := newHarness(t)
	os.WriteFile(filepath.Join(h.dir, "a.go"), []byte("package a\n\n// A does something worth finding.\nfunc A() {}\n"), 0o644)
	h.set.Providers = map[string]config.ProviderSettings{"fake": {APIType: "fake", Model: "fake-model", EmbeddingModel: "embed-small"}}
	h.m = NewManager(Deps{
		Client:     h.client,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return h.ws },
		Providers:  fakeSource{p: failingEmbedder{h.prov}},
		Tools:      tools.Default(),
		Settings:   func() config.Settings { return h.set },
		StateDir:   h.state,
	})
	warned := func() int {
		n := 0
		for _, u := range h.client.snapshot() {
			if u.NoticeTitle == "Semantic index incomplete" {
				n++
			}
		}
		return n
	}
	for range 3 {
		h.newSession()
		h.m.bg.Wait() // this session's build has finished (and failed)
	}
	if n := warned(); n != 1 {
		t.Fatalf("%d warnings about the failed index over three sessions, want 1", n)
	}
}

// TestSemanticSearchThroughTheSession: with an embeddingModel the session indexes the project in
// the background (saying so in notices), offers semantic_search, and the model's call finds the
// right file; without one the tool is not offered.
func TestSemanticSearchThroughTheSession(t *testing.T) {
	h := newHarness(t,
		reply{events: callsReply(tc{"c1", "semantic_search", `{"query":"where is the password verified"}`})},
		reply{events: textReply("found it")})
	os.MkdirAll(filepath.Join(h.dir, "auth"), 0o755)
	os.WriteFile(filepath.Join(h.dir, "auth", "login.go"), []byte("package auth\n\n// Login verifies the password against the stored hash.\nfunc Login() {}\n"), 0o644)
	os.WriteFile(filepath.Join(h.dir, "migrate.go"), []byte("package db\n\n// Migrate upgrades database tables.\nfunc Migrate() {}\n"), 0o644)
	prov := &embeddingProvider{fakeProvider: h.prov}
	h.set.Providers = map[string]config.ProviderSettings{"fake": {APIType: "fake", Model: "fake-model", EmbeddingModel: "embed-small"}}
	h.m = NewManager(Deps{
		Client:     h.client,
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return h.ws },
		Providers:  fakeSource{p: prov},
		Tools:      tools.Default(),
		Settings:   func() config.Settings { return h.set },
		StateDir:   h.state,
	})
	h.newSession()
	h.client.waitFor(t, "the index is ready", func(us []protocol.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u protocol.SessionUpdate) bool { return u.NoticeTitle == "Semantic index ready" })
	})
	h.prompt("find the password check")

	reqs := h.prov.requests()
	if !slices.Contains(offeredNames(reqs[0]), "semantic_search") {
		t.Fatalf("semantic_search not offered: %v", offeredNames(reqs[0]))
	}
	res := toolResults(h.m.sessions[h.sid].historySnapshot())
	if len(res) != 1 || res[0].IsError || !strings.HasPrefix(res[0].Text, "auth/login.go:1-4") {
		t.Fatalf("result %+v", res)
	}
	if !slices.Contains(prov.models, "embed-small") || slices.ContainsFunc(prov.models, func(m string) bool { return m != "embed-small" }) {
		t.Fatalf("embedded with %v", prov.models)
	}
	files, _ := filepath.Glob(filepath.Join(h.state, "index", "*.bin"))
	if len(files) != 1 {
		t.Fatalf("index files %v", files)
	}

	// Without an embedding model the tool is not offered.
	h.set.Providers = map[string]config.ProviderSettings{"fake": {APIType: "fake", Model: "fake-model"}}
	if names := offeredNames(&providers.Request{Tools: h.m.specs()}); slices.Contains(names, "semantic_search") {
		t.Fatalf("offered without an embedding model: %v", names)
	}
}
