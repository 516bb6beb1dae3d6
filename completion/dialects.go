package completion

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/keys"
)

// Doer sends an HTTP request (an *http.Client).
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// The endpoints the settings may name.
const (
	EndpointCompletions = "completions" // OpenAI-compatible POST {baseUrl}/completions with suffix
	EndpointInfill      = "infill"      // llama.cpp POST {baseUrl without /v1}/infill
	EndpointFIM         = "fim"         // Codestral POST {baseUrl}/fim/completions
	EndpointChat        = "chat"        // any chat model, prompted
)

// Default number of tokens a suggestion may have.
const defaultMaxTokens = 128

// endpointOf is the endpoint of the settings, or the one a provider of cfg's dialect serves:
// the anthropic and gemini dialects have no fill-in-the-middle endpoint, so they are prompted.
func endpointOf(set config.Completion, cfg providers.Config) string {
	if set.Endpoint != "" {
		return set.Endpoint
	}
	switch cfg.APIType {
	case "anthropic", "gemini", "replay":
		return EndpointChat
	}
	return EndpointCompletions
}

// call makes the model request of req, cut to the budget, and returns the raw suggestion and
// the request as sent. Only the dialects that send other files (infill, chat) read them: the
// others would pay a round trip to the editor per completion for nothing.
func (e *Engine) call(ctx context.Context, set config.Completion, req Request) (string, Request, error) {
	prov, cfg, err := e.resolve(ctx, set.Provider)
	if err != nil {
		return "", req, err
	}
	ep := endpointOf(set, cfg)
	if (ep == EndpointInfill || ep == EndpointChat) && req.LoadOthers != nil {
		req.Others = append(req.Others, req.LoadOthers()...)
	}
	req = fit(req, budget(set))
	raw, err := e.send(ctx, ep, prov, cfg, set, req)
	return raw, req, err
}

// send makes the model request of req in the dialect of endpoint ep.
func (e *Engine) send(ctx context.Context, ep string, prov providers.Provider, cfg providers.Config, set config.Completion, req Request) (string, error) {
	maxTokens := set.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	switch ep {
	case EndpointChat:
		return chat(ctx, prov, set.Model, maxTokens, req)
	case EndpointCompletions:
		var out struct {
			Choices []struct {
				Text string `json:"text"`
			} `json:"choices"`
		}
		body := map[string]any{"model": set.Model, "prompt": req.Prefix, "suffix": req.Suffix, "max_tokens": maxTokens, "stream": false, "temperature": 0}
		if err := e.post(ctx, cfg, strings.TrimRight(cfg.BaseURL, "/")+"/completions", body, &out); err != nil {
			return "", err
		}
		if len(out.Choices) == 0 {
			return "", nil
		}
		return out.Choices[0].Text, nil
	case EndpointFIM:
		var out struct {
			Choices []struct {
				Message struct {
					Content string `json:"content"`
				} `json:"message"`
			} `json:"choices"`
		}
		body := map[string]any{"model": set.Model, "prompt": req.Prefix, "suffix": req.Suffix, "max_tokens": maxTokens, "stream": false, "temperature": 0}
		if err := e.post(ctx, cfg, strings.TrimRight(cfg.BaseURL, "/")+"/fim/completions", body, &out); err != nil {
			return "", err
		}
		if len(out.Choices) == 0 {
			return "", nil
		}
		return out.Choices[0].Message.Content, nil
	case EndpointInfill:
		var out struct {
			Content string `json:"content"`
		}
		extra := make([]map[string]string, 0, len(req.Others))
		for _, f := range req.Others {
			extra = append(extra, map[string]string{"filename": f.Path, "text": f.Text})
		}
		body := map[string]any{"input_prefix": req.Prefix, "input_suffix": req.Suffix, "input_extra": extra, "n_predict": maxTokens, "stream": false, "temperature": 0}
		base := strings.TrimSuffix(strings.TrimRight(cfg.BaseURL, "/"), "/v1")
		if err := e.post(ctx, cfg, base+"/infill", body, &out); err != nil {
			return "", err
		}
		return out.Content, nil
	default:
		return "", fmt.Errorf("completion.endpoint %q is not one of completions, infill, fim, chat", ep)
	}
}

// post sends body as JSON to url with cfg's key and headers and decodes the answer into out.
// url is always under cfg.BaseURL, the origin the key is bound to; a redirect to another origin
// is refused (providers.CheckRedirect).
func (e *Engine) post(ctx context.Context, cfg providers.Config, url string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	for k, v := range cfg.Headers {
		hr.Header.Set(k, v)
	}
	if cfg.APIKey != "" && hr.Header.Get("Authorization") == "" {
		hr.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	doer := e.Doer
	if doer == nil {
		doer = &http.Client{Transport: providers.HTTPTransport, CheckRedirect: providers.CheckRedirect}
	}
	resp, err := doer.Do(hr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		msg := clip.String(strings.TrimSpace(string(raw)), 200, "…")
		for _, s := range secrets(cfg) {
			if s != "" {
				msg = strings.ReplaceAll(msg, s, "[redacted]")
			}
		}
		return fmt.Errorf("%s answered %d: %s", providers.Origin(url), resp.StatusCode, msg)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s answered with something that is not the expected JSON: %w", providers.Origin(url), err)
	}
	return nil
}

// secrets are the values that must not reach a log line: the key and credential headers.
func secrets(cfg providers.Config) []string {
	out := []string{cfg.APIKey}
	for k, v := range cfg.Headers {
		if keys.IsCredentialHeader(k) {
			out = append(out, v)
		}
	}
	return out
}

// The instructions of the prompted (chat) dialect.
const chatSystem = "You are a code completion engine. The user sends a file with the cursor marked <CURSOR>. " +
	"Reply with only the text to insert at the cursor: no explanation, no code fence, nothing that is already before or after the cursor. " +
	"Reply with nothing when nothing fits."

// chat asks a chat model to fill in the middle.
func chat(ctx context.Context, prov providers.Provider, model string, maxTokens int, req Request) (string, error) {
	var b strings.Builder
	for _, f := range req.Others {
		fmt.Fprintf(&b, "Another open file, %s:\n%s\n\n", f.Path, f.Text)
	}
	lang := req.Language
	if lang == "" {
		lang = "text"
	}
	fmt.Fprintf(&b, "File %s (%s):\n%s<CURSOR>%s", req.Path, lang, req.Prefix, req.Suffix)
	zero := 0.0
	r := &providers.Request{
		Model:       model,
		System:      chatSystem,
		Messages:    []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: b.String()}}}},
		MaxTokens:   maxTokens,
		Temperature: &zero,
	}
	var out strings.Builder
	for ev := range prov.Stream(ctx, r) {
		switch ev.Type {
		case providers.EventTextDelta:
			out.WriteString(ev.Text)
		case providers.EventFailed:
			if ev.Err != nil {
				return "", ev.Err
			}
			return "", fmt.Errorf("the model failed")
		}
	}
	return unfence(out.String()), nil
}

// unfence takes the code out of a reply that wrapped it in a Markdown fence anyway.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") {
		return s
	}
	t = t[3:]
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	} else {
		return ""
	}
	t = strings.TrimSuffix(strings.TrimRight(t, " \n"), "```")
	return strings.TrimSuffix(t, "\n")
}
