package providers

import (
	"context"
	"errors"
	"iter"
	"strings"
)

// Redacted is what a secret is replaced with.
const Redacted = "[redacted]"

// Redact wraps p so that none of secrets appears in the errors and notices it yields, nor in the
// errors of ListModels: a server that quotes the key back (an error body that echoes the request's
// Authorization header) must not put it in front of the user, the model or a transcript.
// Secrets shorter than 4 bytes are ignored: replacing them would garble every message.
func Redact(p Provider, secrets ...string) Provider {
	var keep []string
	for _, s := range secrets {
		if len(s) >= 4 {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return p
	}
	r := redacting{p: p, r: redactor(keep)}
	if ws, ok := p.(WebSearcher); ok {
		// Every dialect that searches also lists and embeds or streams; its wrapper carries all.
		return redactingSearcher{p: Redact(unsearching{p}, keep...), ws: ws, r: r.r}
	}
	l, lists := p.(ModelLister)
	e, embeds := p.(Embedder)
	switch {
	case lists && embeds:
		return redactingBoth{redactingLister{r, l}, e}
	case lists:
		return redactingLister{r, l}
	case embeds:
		return redactingEmbedder{r, e}
	}
	return r
}

type redactor []string

func (r redactor) text(s string) string {
	for _, k := range r {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	return s
}

func (r redactor) err(e *Error) *Error {
	if e == nil {
		return nil
	}
	c := *e
	c.Message, c.Detail, c.Param = r.text(c.Message), r.text(c.Detail), r.text(c.Param)
	return &c
}

type redacting struct {
	p Provider
	r redactor
}

func (w redacting) Stream(ctx context.Context, req *Request) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for ev := range w.p.Stream(ctx, req) {
			switch ev.Type {
			case EventFailed:
				ev.Err = w.r.err(ev.Err)
			case EventNotice:
				ev.Text = w.r.text(ev.Text)
			}
			if !yield(ev) {
				return
			}
		}
	}
}

type redactingLister struct {
	redacting
	l ModelLister
}

func (w redactingLister) ListModels(ctx context.Context) ([]string, error) {
	models, err := w.l.ListModels(ctx)
	if err == nil {
		return models, nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return models, w.r.err(pe)
	}
	return models, errors.New(w.r.text(err.Error()))
}

type redactingEmbedder struct {
	redacting
	e Embedder
}

func (w redactingEmbedder) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	return redactEmbed(ctx, w.r, w.e, model, texts)
}

type redactingBoth struct {
	redactingLister
	e Embedder
}

func (w redactingBoth) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	return redactEmbed(ctx, w.r, w.e, model, texts)
}

func redactEmbed(ctx context.Context, r redactor, e Embedder, model string, texts []string) ([][]float32, error) {
	vs, err := e.Embed(ctx, model, texts)
	if err == nil {
		return vs, nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return nil, r.err(pe)
	}
	return nil, errors.New(r.text(err.Error()))
}

// unsearching hides a provider's WebSearcher, so Redact wraps the rest of it as usual.
type unsearching struct{ Provider }

func (u unsearching) ListModels(ctx context.Context) ([]string, error) {
	if l, ok := u.Provider.(ModelLister); ok {
		return l.ListModels(ctx)
	}
	return nil, errors.New("this provider cannot list models")
}

func (u unsearching) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if e, ok := u.Provider.(Embedder); ok {
		return e.Embed(ctx, model, texts)
	}
	return nil, &Error{Kind: ErrInvalidRequest, Message: "this provider's dialect has no embeddings endpoint; set embeddingModel on an openai or gemini provider"}
}

// redactingSearcher is a redacted provider that can also search the web.
type redactingSearcher struct {
	p  Provider
	ws WebSearcher
	r  redactor
}

func (w redactingSearcher) Stream(ctx context.Context, req *Request) iter.Seq[Event] {
	return w.p.Stream(ctx, req)
}

func (w redactingSearcher) ListModels(ctx context.Context) ([]string, error) {
	return w.p.(ModelLister).ListModels(ctx)
}

func (w redactingSearcher) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	return w.p.(Embedder).Embed(ctx, model, texts)
}

func (w redactingSearcher) WebSearch(ctx context.Context, req WebSearchRequest) (WebSearchResult, error) {
	res, err := w.ws.WebSearch(ctx, req)
	if err == nil {
		return res, nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return res, w.r.err(pe)
	}
	return res, errors.New(w.r.text(err.Error()))
}
