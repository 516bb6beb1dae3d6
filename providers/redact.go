package providers

import (
	"context"
	"encoding/base64"
	"errors"
	"iter"
	"slices"
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
	r := redacting{p: p, r: newRedactor(keep)}
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

// redactor replaces each secret where it appears as written, in any ASCII case (a server that
// echoes a header upper-cased), and base64-encoded (a Basic credential, a JSON body echoed
// encoded): the run of base64 characters a key determines on its own is replaced at each of the
// three alignments it can have inside a larger encoded blob, in the standard and URL alphabets.
type redactor struct {
	folded []string // the secrets, ASCII lower-cased, matched case-insensitively
	exact  []string // the base64 runs, matched as they are
}

// minBase64Run is the shortest encoded run that is replaced: shorter runs (from short keys)
// would match ordinary text.
const minBase64Run = 8

func newRedactor(secrets []string) redactor {
	var r redactor
	for _, k := range secrets {
		r.folded = append(r.folded, foldASCII(k))
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for pad := 0; pad < 3; pad++ {
				full := enc.EncodeToString(append(make([]byte, pad), k...))
				// Character i holds bits 6i..6i+6; it is the key's alone when they lie within
				// the key's bits 8*pad..8*(pad+len).
				from, to := (8*pad+5)/6, 8*(pad+len(k))/6
				if to-from >= minBase64Run && !slices.Contains(r.exact, full[from:to]) {
					r.exact = append(r.exact, full[from:to])
				}
			}
		}
	}
	return r
}

// foldASCII lower-cases the ASCII letters of s only, so indexes in the result are indexes in s.
func foldASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (r redactor) text(s string) string {
	for _, k := range r.exact {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	for _, k := range r.folded {
		f := foldASCII(s)
		if !strings.Contains(f, k) {
			continue
		}
		var b strings.Builder
		last := 0
		for i := strings.Index(f, k); i >= 0; {
			b.WriteString(s[last:i])
			b.WriteString(Redacted)
			last = i + len(k)
			j := strings.Index(f[last:], k)
			if j < 0 {
				break
			}
			i = last + j
		}
		b.WriteString(s[last:])
		s = b.String()
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
