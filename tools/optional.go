package tools

import "context"

// Need names what an optional tool needs before it is offered to the model. The engine decides
// from the settings which needs are met (session), the registry drops the tools whose needs are
// not (Registry.Offered), so a tool the model cannot use is never declared.
type Need string

const (
	// NeedWeb is the user's web.enabled setting.
	NeedWeb Need = "web"
	// NeedWebSearch is a search-capable provider (webSearch.provider).
	NeedWebSearch Need = "webSearch"
	// NeedEmbeddings is a provider with an embeddingModel.
	NeedEmbeddings Need = "embeddings"
)

// Needer is implemented by a tool that is offered only when its needs are met.
type Needer interface{ Needs() []Need }

// NeedsOf returns what t needs before it is offered (nil for an ordinary tool).
func NeedsOf(t Tool) []Need {
	if n, ok := t.(Needer); ok {
		return n.Needs()
	}
	return nil
}

// Offered returns the registry without the tools one of whose needs has(need) denies; r itself
// when it keeps every tool, so a caller can tell "all of them" by identity.
func (r *Registry) Offered(has func(Need) bool) *Registry {
	var keep []Tool
	dropped := false
	for _, t := range r.order {
		ok := true
		for _, n := range NeedsOf(t) {
			if !has(n) {
				ok = false
			}
		}
		if ok {
			keep = append(keep, t)
		} else {
			dropped = true
		}
	}
	if !dropped {
		return r
	}
	return NewRegistry(keep...)
}

// SemanticIndex is the project's semantic index as semantic_search sees it (tools/semindex
// implements it; the engine builds one per project and embedding model).
type SemanticIndex interface {
	Search(ctx context.Context, query string, max int) (SemanticResult, error)
}

// SemanticResult is what one search found, best first, and how far the index is built.
type SemanticResult struct {
	Hits []SemanticHit
	// Files is the number of files indexed so far, Pending those still waiting; a search while
	// Pending > 0 covers only part of the project.
	Files, Pending int
}

// SemanticHit is one chunk of a file.
type SemanticHit struct {
	// Path is absolute.
	Path               string
	StartLine, EndLine int
	Score              float32
	Text               string
}

// WebAnswer is web_search's answer: the text the search-capable model wrote and the pages it
// cites.
type WebAnswer struct {
	Text    string
	Sources []WebSource
}

// WebSource is one cited page.
type WebSource struct {
	Title string
	URL   string
}
