// Package gemini speaks the Gemini API's streamGenerateContent (POST
// /v1beta/models/{model}:streamGenerateContent?alt=sse): it builds the request from the neutral
// model (function declarations, function responses, thoughtSignatures sent back,
// thinkingConfig.thinkingBudget from the request's thinking flag and budget, clamped to what the
// model allows), keeps the stable system instruction and tool declarations in a cachedContents
// resource when that pays (never on a single-shot first turn, never below the model's minimum
// cacheable size, and falling back to inline for good on any error with that payload), and
// normalizes the chunks (text and thought parts, functionCall parts with or without ids,
// cumulative usageMetadata, finish reasons, blocked prompts) into providers.Event.
package gemini

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

const (
	// DefaultBaseURL is used when the configuration names none.
	DefaultBaseURL = "https://generativelanguage.googleapis.com"
	// CacheTTL is how long a cachedContents resource lives.
	CacheTTL = 10 * time.Minute

	name = "Gemini"
)

// Provider is the Gemini dialect.
type Provider struct {
	cfg  providers.Config
	base string
	tr   *httpsse.Transport
	// now is the clock for cache expiry.
	now func() time.Time

	mu     sync.Mutex
	caches map[string]*cacheEntry // by payload key
}

type cacheEntry struct {
	name    string
	expires time.Time
	// inline is set once caching failed for this payload: it is never tried again.
	inline bool
}

var (
	_ providers.Provider    = (*Provider)(nil)
	_ providers.ModelLister = (*Provider)(nil)
)

// Dialect is everything the registry knows of this dialect: one line in cmd/agentd registers it.
var Dialect = providers.Dialect{
	APIType:        "gemini",
	New:            New,
	DefaultBaseURL: DefaultBaseURL,
	KeyEnv:         "GEMINI_API_KEY",
	NeedsNetwork:   true,
}

// New is the registry's factory for apiType "gemini".
func New(cfg providers.Config) (providers.Provider, error) {
	return NewWithTransport(cfg, httpsse.New())
}

// NewWithTransport builds the dialect over a given transport (tests inject one that does not
// sleep between retries).
func NewWithTransport(cfg providers.Config, tr *httpsse.Transport) (providers.Provider, error) {
	base, err := httpsse.BaseURL(cfg.BaseURL, DefaultBaseURL, "/v1beta")
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, base: base, tr: httpsse.Configured(tr, cfg), now: time.Now, caches: map[string]*cacheEntry{}}, nil
}

func (p *Provider) header() http.Header { return httpsse.Header(p.cfg, "x-goog-api-key") }

func (p *Provider) model(req *providers.Request) string {
	m := req.Model
	if m == "" {
		m = p.cfg.Model
	}
	return strings.TrimPrefix(m, "models/")
}

// Stream implements providers.Provider.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		em := providers.NewEmitter(yield)
		if req == nil || p.model(req) == "" {
			em.Fail(&providers.Error{Kind: providers.ErrInvalidRequest, Message: "No Gemini model is configured; set the provider's model."})
			return
		}
		model := p.model(req)
		cached, key := p.cachedContent(ctx, req, model, em)
		if em.Ended() {
			return
		}
		s, perr := p.open(ctx, req, model, cached, em)
		if perr != nil && cached != "" && cacheFault(perr) && !em.Ended() {
			// The cache reference was refused: remember, say so, and send the prompt inline.
			p.forgetCache(key)
			if !em.Notice("Gemini refused the context cache, sending the prompt inline") {
				return
			}
			s, perr = p.open(ctx, req, model, "", em)
		}
		if perr != nil {
			// A gateway that strips or refuses tools: the loop goes on with the text protocol.
			perr.ToolsRefused = len(req.Tools) > 0 && providers.RefusesTools(perr)
			em.Fail(perr)
			return
		}
		defer s.Release(em)
		d := decoder{em: em, idPrefix: syntheticIDPrefix + randomID() + "-"}
		for ev := range s.Events() {
			if !d.data(ev.Data) {
				break
			}
		}
		if em.Ended() {
			return
		}
		if e := s.Err(); e != nil {
			em.Fail(e)
			return
		}
		d.end()
	}
}

func (p *Provider) open(ctx context.Context, req *providers.Request, model, cached string, em *providers.Emitter) (*httpsse.Stream, *providers.Error) {
	body, err := buildRequest(req, model, buildOptions{cachedContent: cached})
	if err != nil {
		return nil, &providers.Error{Kind: providers.ErrInvalidRequest, Detail: err.Error(),
			Message: "The request could not be encoded for Gemini (" + err.Error() + "); this is a bug, please report it."}
	}
	return p.tr.Open(ctx, &httpsse.Call{
		Provider: name,
		URL:      p.base + "/v1beta/models/" + url.PathEscape(model) + ":streamGenerateContent?alt=sse",
		Header:   p.header(),
		Body:     body,
		Notice:   em.Notice,
	})
}

// cacheFault reports whether an error of a request that used a cache may be the cache's fault
// (expired, deleted, not allowed for this key or model).
func cacheFault(e *providers.Error) bool {
	switch e.Kind {
	case providers.ErrNotFound, providers.ErrInvalidRequest, providers.ErrPermission:
		return true
	}
	return false
}

// cachedContent returns the name of a cachedContents resource holding req's system instruction
// and tools, creating it when caching pays, or "" to send them inline. key identifies the
// payload.
func (p *Provider) cachedContent(ctx context.Context, req *providers.Request, model string, em *providers.Emitter) (name, key string) {
	if req.System == "" && len(req.Tools) == 0 {
		return "", ""
	}
	// A single-shot first turn may never be followed by another: a cache would cost a write
	// and storage for nothing.
	if !hasAssistantTurn(req.Messages) {
		return "", ""
	}
	body, err := json.Marshal(&cachedContentRequest{
		Model:             "models/" + model,
		SystemInstruction: systemInstruction(req.System),
		Tools:             tools(req.Tools),
		TTL:               formatTTL(CacheTTL),
	})
	if err != nil {
		return "", ""
	}
	// Roughly 4 bytes a token: below the model's minimum the API refuses to cache.
	if len(body)/4 < Limits(model).MinCacheTokens {
		return "", ""
	}
	key = payloadKey(p.base, body)
	now := p.now()
	p.mu.Lock()
	e := p.caches[key]
	if e != nil && (e.inline || now.Before(e.expires)) {
		p.mu.Unlock()
		if e.inline {
			return "", key
		}
		return e.name, key
	}
	p.mu.Unlock()

	// One attempt only: a cache that cannot be made right now is not worth a wait.
	tr := *p.tr
	tr.Retry.MaxAttempts = 1
	b, perr := tr.Fetch(ctx, &httpsse.Call{Provider: "Gemini", Method: http.MethodPost, URL: p.base + "/v1beta/cachedContents", Header: p.header(), Body: body})
	var resp struct {
		Name string `json:"name"`
	}
	if perr == nil && (json.Unmarshal(b, &resp) != nil || resp.Name == "") {
		perr = providers.ProtocolError("Gemini", "cachedContents answered without a name")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if perr != nil {
		if perr.Kind == providers.ErrCancelled {
			return "", key
		}
		p.caches[key] = &cacheEntry{inline: true}
		em.Notice("Gemini context caching is unavailable (" + string(perr.Kind) + "), sending the prompt inline")
		return "", key
	}
	// Renew a little before the server drops it.
	p.caches[key] = &cacheEntry{name: resp.Name, expires: now.Add(CacheTTL - time.Minute)}
	return resp.Name, key
}

func (p *Provider) forgetCache(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.caches[key] = &cacheEntry{inline: true}
}

func hasAssistantTurn(msgs []providers.Message) bool {
	for _, m := range msgs {
		if m.Role == providers.RoleAssistant {
			return true
		}
	}
	return false
}

func formatTTL(d time.Duration) string { return strconv.Itoa(int(d/time.Second)) + "s" }

func payloadKey(base string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(base))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ListModels implements providers.ModelLister with GET /v1beta/models, keeping the models that
// can generate content or embed it (agent/providers/test lists the two apart).
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	var out []string
	token := ""
	for page := 0; page < 20; page++ {
		u := p.base + "/v1beta/models?pageSize=1000"
		if token != "" {
			u += "&pageToken=" + url.QueryEscape(token)
		}
		b, perr := p.tr.Fetch(ctx, &httpsse.Call{Provider: name, URL: u, Header: p.header()})
		if perr != nil {
			return nil, perr
		}
		var resp struct {
			Models []struct {
				Name    string   `json:"name"`
				Methods []string `json:"supportedGenerationMethods"`
			} `json:"models"`
			NextPageToken string `json:"nextPageToken"`
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			return nil, providers.ProtocolError(name, "model list: "+err.Error())
		}
		for _, m := range resp.Models {
			ok := len(m.Methods) == 0
			for _, meth := range m.Methods {
				if meth == "generateContent" || meth == "streamGenerateContent" || meth == "embedContent" || meth == "batchEmbedContents" {
					ok = true
				}
			}
			if ok {
				out = append(out, strings.TrimPrefix(m.Name, "models/"))
			}
		}
		if resp.NextPageToken == "" {
			break
		}
		token = resp.NextPageToken
	}
	return out, nil
}
