// Package openai speaks OpenAI's chat-completions wire dialect (POST {baseUrl}/chat/completions
// with stream=true) for OpenAI itself and every server that copies it: Ollama, LM Studio,
// llama.cpp's llama-server, OpenRouter, DeepSeek, vLLM, Groq and the like. It builds the request
// body from the neutral history, decodes the SSE chunks into neutral events (text, reasoning in
// its three dialects, tool calls assembled by index, usage, refusal), adapts to picky servers
// (reasoning models' parameters, a 400 naming an unsupported parameter; a server that refuses
// tools is reported as such, for the loop's text tool-call protocol) and lists models for the connection test. The transport, retries and error classes are
// the shared ones in providers/httpsse and providers.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

// DefaultBaseURL is OpenAI's own API; the paths hang under it as in OpenAI's SDKs.
const DefaultBaseURL = "https://api.openai.com/v1"

// Dialect is everything the registry knows of this dialect: one line in cmd/agentd registers it.
// The presets are the servers agentd knows by provider id; local ones are named by address (a
// host is local only by its address, or as localhost) and need no key; each remote one names its own variable,
// which is sent only to its origin.
var Dialect = providers.Dialect{
	APIType:        "openai",
	New:            New,
	DefaultBaseURL: DefaultBaseURL,
	KeyEnv:         "OPENAI_API_KEY",
	NeedsNetwork:   true,
	Presets:        presets,
}

// presets apart from Dialect, which refers to New, which reads them.
var presets = []providers.Preset{
	{ID: "openai", Name: "OpenAI", BaseURL: DefaultBaseURL, KeyEnv: "OPENAI_API_KEY"},
	{ID: "ollama", Name: "Ollama", BaseURL: "http://127.0.0.1:11434/v1", OutputSchema: providers.OutputSchemaResponseFormat},
	{ID: "lmstudio", Name: "LM Studio", BaseURL: "http://127.0.0.1:1234/v1"},
	{ID: "llamacpp", Name: "llama-server", BaseURL: "http://127.0.0.1:8080/v1", OutputSchema: providers.OutputSchemaJSONSchema},
	{ID: "openrouter", Name: "OpenRouter", BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY"},
	{ID: "deepseek", Name: "DeepSeek", BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY"},
}

func presetByID(id string) (providers.Preset, bool) {
	return providers.Dialect{Presets: presets}.Preset(id)
}

// Provider streams chat completions from one OpenAI-compatible server.
type Provider struct {
	cfg        providers.Config
	base       string
	ep         providers.Endpoint
	who        string
	tr         *httpsse.Transport
	openRouter bool
	// official is true at OpenAI's own origin, which refuses every keyless request.
	official bool
	// memos is what this provider learned about its server, per model.
	memos sync.Map // model → *serverMemo
	// tools is the encoded tools array of the last request.
	tools providers.ToolsJSON
	// outputSchema is how the server takes a JSON Schema for its output, "" when agentd does
	// not know it to (Config.OutputSchema, else the preset's).
	outputSchema string
}

// newClient is a provider's HTTP client: it refuses cross-origin redirects, so a key never follows
// a redirect to another origin. Connections are kept alive across turns and providers by the
// one transport they share (providers.HTTPTransport); a client per provider, made when it is,
// spares the package's init building one at every start.
func newClient() *http.Client {
	return &http.Client{Transport: providers.HTTPTransport, CheckRedirect: providers.CheckRedirect}
}

// New is the registry Factory for apiType "openai".
func New(cfg providers.Config) (providers.Provider, error) {
	return NewWithTransport(cfg, &httpsse.Transport{Doer: newClient()})
}

// NewWithTransport is New with a given transport (tests pass one that records its sleeps).
func NewWithTransport(cfg providers.Config, tr *httpsse.Transport) (providers.Provider, error) {
	return newProvider(cfg, tr)
}

func newProvider(cfg providers.Config, tr *httpsse.Transport) (*Provider, error) {
	base := strings.TrimSpace(cfg.BaseURL)
	preset, isPreset := presetByID(cfg.ID)
	if base == "" {
		base = DefaultBaseURL
		if isPreset {
			base = preset.BaseURL
		}
	}
	base = strings.TrimRight(base, "/")
	ep, err := providers.CheckEndpoint(base)
	if err != nil {
		return nil, err
	}
	if tr == nil {
		tr = &httpsse.Transport{Doer: newClient()}
	}
	tr = httpsse.Configured(tr, cfg)
	p := &Provider{cfg: cfg, base: base, ep: ep, tr: tr, official: ep.Origin == providers.Origin(DefaultBaseURL)}
	p.who = displayName(cfg.ID, base, ep)
	p.openRouter = strings.Contains(strings.ToLower(ep.Origin), "openrouter.ai")
	p.outputSchema = outputSchemaOf(cfg, base)
	return p, nil
}

// outputSchemaOf is how the server at base takes a JSON Schema for its output: the settings'
// choice, else that of the preset whose origin base has (a provider named "ollama" pointed at
// another server is not known to be Ollama).
func outputSchemaOf(cfg providers.Config, base string) string {
	switch cfg.OutputSchema {
	case providers.OutputSchemaOff:
		return ""
	case providers.OutputSchemaJSONSchema, providers.OutputSchemaResponseFormat:
		return cfg.OutputSchema
	}
	origin := providers.Origin(base)
	for _, pr := range presets {
		if providers.Origin(pr.BaseURL) == origin {
			return pr.OutputSchema
		}
	}
	return ""
}

// ConstrainsOutput reports whether requests carry Request.ResponseSchema to the server, which
// enforces it while sampling.
func (p *Provider) ConstrainsOutput() bool { return p.outputSchema != "" }

// displayName names the server in user-facing messages: the preset whose URL or id it is, else
// its host.
func displayName(id, base string, ep providers.Endpoint) string {
	origin := providers.Origin(base)
	for _, pr := range presets {
		if providers.Origin(pr.BaseURL) == origin {
			return pr.Name
		}
	}
	if pr, ok := presetByID(id); ok {
		return pr.Name
	}
	return "The server at " + strings.TrimPrefix(strings.TrimPrefix(ep.Origin, "https://"), "http://")
}

// BaseURL is the base URL requests go to, after defaults.
func (p *Provider) BaseURL() string { return p.base }

// Endpoint is what CheckEndpoint said about the base URL.
func (p *Provider) Endpoint() providers.Endpoint { return p.ep }

func (p *Provider) header(stream bool) http.Header {
	h := http.Header{}
	for k, v := range p.cfg.Headers {
		h.Set(k, v)
	}
	if p.cfg.APIKey != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	return h
}

// keyMissing is the error for OpenAI's own host without a key, given before any request.
func (p *Provider) keyMissing() *providers.Error {
	if !p.official || p.cfg.APIKey != "" {
		return nil
	}
	for k, v := range p.cfg.Headers {
		if v != "" && (strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Api-Key")) {
			return nil
		}
	}
	return &providers.Error{Kind: providers.ErrAuth,
		Message: p.who + " needs an API key and none is configured; set OPENAI_API_KEY, or store one with `agentd key set " + p.ep.Origin + "`."}
}

// plainHTTPNoticed remembers the origins whose plain-http notice was given (once per process).
var plainHTTPNoticed sync.Map

// plainHTTPNotice is the one-time notice for plain http to a private (not loopback) address:
// that traffic crosses the local network unencrypted. Loopback never leaves the machine.
func (p *Provider) plainHTTPNotice() string {
	if !p.ep.PlainHTTP || isLoopbackOrigin(p.ep.Origin) {
		return ""
	}
	if _, seen := plainHTTPNoticed.LoadOrStore(p.ep.Origin, true); seen {
		return ""
	}
	return "Requests to " + p.ep.Origin + " use plain http: prompts and code cross your local network unencrypted."
}

func isLoopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return providers.IsLoopbackHost(u.Hostname())
}

// serverMemo is what agentd learned about the server and a model: the parameters it refuses.
// It lives on the provider, which the registry keeps for as long as its configuration holds, so
// only the first turn pays for the discovery. (A refused tools declaration is the agent loop's
// to remember: it switches to the text tool-call protocol, per origin and model.)
type serverMemo struct {
	mu   sync.Mutex
	drop map[string]bool
}

func (p *Provider) memoFor(model string) *serverMemo {
	m, _ := p.memos.LoadOrStore(model, &serverMemo{drop: map[string]bool{}})
	return m.(*serverMemo)
}

func (m *serverMemo) snapshot() map[string]bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := make(map[string]bool, len(m.drop))
	for k, v := range m.drop {
		d[k] = v
	}
	return d
}

// Stream sends one chat-completions request and yields its events.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		em := providers.NewEmitter(yield)
		defer em.Finish(providers.Cancelled())
		model := strings.TrimSpace(req.Model)
		if model == "" {
			model = strings.TrimSpace(p.cfg.Model)
		}
		if model == "" {
			em.Fail(&providers.Error{Kind: providers.ErrInvalidRequest,
				Message: "No model is set for " + p.who + "; set the provider's model (any name the server knows)."})
			return
		}
		if e := p.keyMissing(); e != nil {
			em.Fail(e)
			return
		}
		if n := p.plainHTTPNotice(); n != "" && !em.Notice(n) {
			return
		}
		memo := p.memoFor(model)
		opt := options{drop: memo.snapshot(), openRouter: p.openRouter, openAIHost: p.official, outputSchema: p.outputSchema}
		var stream *httpsse.Stream
		for {
			body := buildRequest(req, model, opt)
			b, err := encodeRequest(body, req.Tools, &p.tools)
			if err != nil {
				em.Fail(&providers.Error{Kind: providers.ErrInvalidRequest, Detail: err.Error(),
					Message: "agentd could not encode the request (" + err.Error() + "); a tool schema may not be valid JSON."})
				return
			}
			s, perr := p.tr.Open(ctx, &httpsse.Call{
				Provider: p.who,
				URL:      p.base + "/chat/completions",
				Header:   p.header(true),
				Body:     b,
				Classify: p.classify,
				Notice:   em.Notice,
			})
			if perr == nil {
				stream = s
				break
			}
			if param := refusedParam(perr, &body); param != "" && !opt.drop[param] {
				opt.drop[param] = true
				memo.mu.Lock()
				memo.drop[param] = true
				memo.mu.Unlock()
				continue
			}
			if len(req.Tools) > 0 && providers.RefusesTools(perr) {
				// The loop answers this by going on with the text tool-call protocol.
				perr.ToolsRefused = true
				perr.Kind = providers.ErrInvalidRequest
				perr.Message = p.who + " refused the tools declaration for model " + model + " (" + clip.String(perr.Detail, 200, "…") + ")."
			}
			em.Fail(perr)
			return
		}
		defer stream.Release(em)
		p.decode(ctx, stream, em)
	}
}

// decode runs the decoder over the stream's events.
func (p *Provider) decode(ctx context.Context, s *httpsse.Stream, em *providers.Emitter) {
	d := &decoder{who: p.who}
	emit := func(ev providers.Event) bool {
		switch ev.Type {
		case providers.EventCompleted:
			em.Complete(ev.StopReason)
			return false
		case providers.EventFailed:
			em.Fail(ev.Err)
			return false
		}
		return em.Emit(ev)
	}
	for ev := range s.Events() {
		if !d.event(ev.Type, ev.Data, emit) {
			return
		}
	}
	if em.Ended() {
		return
	}
	readErr := s.Err()
	if readErr == nil && ctx.Err() != nil {
		readErr = providers.Cancelled()
	}
	d.end(readErr, emit)
}

// ListModels asks GET {baseUrl}/models; it backs agent/providers/test. A 404 means the URL is
// wrong (not the key), a 401 or 403 that the key is.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	if e := p.keyMissing(); e != nil {
		return nil, e
	}
	url := p.base + "/models"
	// A connection test answers at once with what happened; it does not back off and retry.
	tr := *p.tr
	tr.Retry.MaxAttempts = 1
	body, perr := tr.Fetch(ctx, &httpsse.Call{Provider: p.who, Method: http.MethodGet, URL: url, Header: p.header(false)})
	if perr != nil {
		switch {
		case perr.Status == http.StatusNotFound || perr.Status == http.StatusMethodNotAllowed:
			perr.Kind = providers.ErrNotFound
			perr.Message = fmt.Sprintf("%s has no model list at %s (HTTP %d); check the URL: OpenAI-compatible servers usually end in /v1.", p.who, url, perr.Status)
		case perr.Status == http.StatusUnauthorized || perr.Status == http.StatusForbidden:
			perr.Message = fmt.Sprintf("%s refused the request for its model list (HTTP %d); check the key.", p.who, perr.Status)
		}
		return nil, perr
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		return nil, &providers.Error{Kind: providers.ErrNotFound, Detail: clip.String(string(body), 300, "…"),
			Message: fmt.Sprintf("%s answered %s with something that is not a model list; check the URL: OpenAI-compatible servers usually end in /v1.", p.who, url)}
	}
	models := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		if m.ID != "" {
			models = append(models, m.ID)
		}
	}
	return models, nil
}

// refusedParam returns the optional parameter a 400 (or 422) says the server does not support,
// when agentd sent it: from the error's param field, else from a quoted name in its message.
func refusedParam(e *providers.Error, body *chatRequest) string {
	if e.Kind != providers.ErrInvalidRequest || (e.Status != 400 && e.Status != 422) {
		return ""
	}
	if e.Param != "" {
		// The server named the parameter; trust it over words in the message.
		if slices.Contains(droppable, e.Param) && sent(body, e.Param) {
			return e.Param
		}
		return ""
	}
	msg := strings.ToLower(e.Detail + " " + e.Message)
	for _, name := range droppable {
		if !sent(body, name) {
			continue
		}
		for _, q := range []string{"'", "\"", "`"} {
			if strings.Contains(msg, q+name+q) {
				return name
			}
		}
	}
	if !strings.Contains(msg, "unsupported") && !strings.Contains(msg, "not supported") &&
		!strings.Contains(msg, "unrecognized") && !strings.Contains(msg, "unknown") &&
		!strings.Contains(msg, "not permitted") && !strings.Contains(msg, "extra") {
		return ""
	}
	for _, name := range droppable {
		if sent(body, name) && containsWord(msg, name) {
			return name
		}
	}
	return ""
}

// classify is the transport's classifier with one correction: llama-server answers a tools
// declaration it cannot honour with a 500, which is not worth retrying.
func (p *Provider) classify(status int, h http.Header, body []byte) *providers.Error {
	e := providers.ClassifyResponse(p.who, status, h, body)
	if e.Kind == providers.ErrServer && providers.ToolsRefusalText(e.Detail) {
		e.Kind = providers.ErrInvalidRequest
	}
	return e
}

// containsWord reports whether s contains w delimited by non-identifier bytes.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isIdent(s[j-1])
		after := j+len(w) == len(s) || !isIdent(s[j+len(w)])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
