// Package anthropic speaks Anthropic's Messages API (POST /v1/messages with stream=true): it builds
// the request body from the neutral model (prompt-caching breakpoints on the system prompt, the
// tool block and the conversation prefix; extended thinking with its budget and the
// interleaved-thinking beta; thinking signatures and redacted thinking sent back verbatim) and
// normalizes the event stream (text, thinking with signature_delta, redacted thinking, tool_use
// with input_json_delta accumulated, pings, in-stream errors, stop reasons, usage with cache
// tokens) into providers.Event.
package anthropic

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

const (
	// DefaultBaseURL is used when the configuration names none.
	DefaultBaseURL = "https://api.anthropic.com"
	// APIVersion is the anthropic-version header every request carries.
	APIVersion = "2023-06-01"
	// InterleavedThinkingBeta lets the model think between tool calls.
	InterleavedThinkingBeta = "interleaved-thinking-2025-05-14"

	name = "Anthropic"
)

// Provider is the Anthropic dialect.
type Provider struct {
	cfg  providers.Config
	base string
	tr   *httpsse.Transport
}

var (
	_ providers.Provider    = (*Provider)(nil)
	_ providers.ModelLister = (*Provider)(nil)
)

// Dialect is everything the registry knows of this dialect: one line in cmd/agentd registers it.
var Dialect = providers.Dialect{
	APIType:        "anthropic",
	New:            New,
	DefaultBaseURL: DefaultBaseURL,
	KeyEnv:         "ANTHROPIC_API_KEY",
	NeedsNetwork:   true,
}

// New is the registry's factory for apiType "anthropic".
func New(cfg providers.Config) (providers.Provider, error) {
	return NewWithTransport(cfg, httpsse.New())
}

// NewWithTransport builds the dialect over a given transport (tests inject one that does not
// sleep between retries).
func NewWithTransport(cfg providers.Config, tr *httpsse.Transport) (providers.Provider, error) {
	base, err := httpsse.BaseURL(cfg.BaseURL, DefaultBaseURL, "/v1")
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, base: base, tr: httpsse.Configured(tr, cfg)}, nil
}

func (p *Provider) header(req *providers.Request) http.Header {
	h := httpsse.Header(p.cfg, "x-api-key")
	h.Set("anthropic-version", APIVersion)
	if req != nil && req.Thinking.Enabled && len(req.Tools) > 0 {
		betas := h.Get("anthropic-beta")
		if !strings.Contains(betas, InterleavedThinkingBeta) {
			if betas != "" {
				betas += ","
			}
			h.Set("anthropic-beta", betas+InterleavedThinkingBeta)
		}
	}
	return h
}

// Stream implements providers.Provider.
func (p *Provider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		em := providers.NewEmitter(yield)
		body, err := BuildRequest(req, p.cfg.Model)
		if err != nil {
			em.Fail(&providers.Error{Kind: providers.ErrInvalidRequest, Detail: err.Error(),
				Message: "The request could not be encoded for Anthropic (" + err.Error() + "); this is a bug, please report it."})
			return
		}
		s, perr := p.tr.Open(ctx, &httpsse.Call{
			Provider: name,
			URL:      p.base + "/v1/messages",
			Header:   p.header(req),
			Body:     body,
			Notice:   em.Notice,
		})
		if perr != nil {
			// A gateway that strips or refuses tools: the loop goes on with the text protocol.
			perr.ToolsRefused = len(req.Tools) > 0 && providers.RefusesTools(perr)
			em.Fail(perr)
			return
		}
		defer s.Release(em)
		d := decoder{em: em}
		for ev := range s.Events() {
			if !d.event(ev.Type, ev.Data) {
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
		em.Fail(providers.Truncated(name))
	}
}

// ListModels implements providers.ModelLister with GET /v1/models, following pages.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	var out []string
	after := ""
	for page := 0; page < 20; page++ {
		u := p.base + "/v1/models?limit=1000"
		if after != "" {
			u += "&after_id=" + url.QueryEscape(after)
		}
		b, perr := p.tr.Fetch(ctx, &httpsse.Call{Provider: name, URL: u, Header: p.header(nil)})
		if perr != nil {
			return nil, perr
		}
		var resp struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			return nil, providers.ProtocolError(name, "model list: "+err.Error())
		}
		for _, m := range resp.Data {
			out = append(out, m.ID)
		}
		if !resp.HasMore || resp.LastID == "" {
			break
		}
		after = resp.LastID
	}
	return out, nil
}
