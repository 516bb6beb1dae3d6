package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/workspace"
)

type semanticSearchIn struct {
	Query      string `json:"query" schema:"maxLength=2000"`
	MaxResults int    `json:"max_results,omitempty" schema:"minimum=1,maximum=50"`
}

func (in semanticSearchIn) title() string {
	if strings.TrimSpace(in.Query) == "" {
		return ""
	}
	return "Semantic search: " + clip.String(strings.TrimSpace(in.Query), 60, "…")
}

// SemanticSearch is the semantic_search tool: the chunks of the project's text files whose
// meaning is closest to a query, from the index the engine keeps (Env.Semantic).
var SemanticSearch Tool = &typed[semanticSearchIn]{spec: Spec{Name: "semantic_search", Effect: EffectRead, Kind: "search", Title: "Semantic search", Needs: []Need{NeedEmbeddings}}, run: semanticSearch}

// maxHitText bounds the text shown of one hit.
const maxHitText = 3000

func semanticSearch(ctx context.Context, env *Env, in semanticSearchIn) Result {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return Errorf("field query is empty; describe what you are looking for")
	}
	if env.Semantic == nil {
		return Errorf("semantic_search is not available: no embedding model is configured; use search_text")
	}
	max := in.MaxResults
	if max == 0 {
		max = 10
	}
	res, err := env.Semantic.Search(ctx, q, max)
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("cancelled")
		}
		return Errorf("semantic_search failed: %v; use search_text meanwhile", err)
	}
	var b strings.Builder
	if res.Pending > 0 {
		fmt.Fprintf(&b, "The index is still being built (%d files indexed, %d to go): these results cover only part of the project.\n", res.Files, res.Pending)
	}
	if len(res.Hits) == 0 {
		if res.Pending > 0 {
			b.WriteString("Nothing is indexed yet; try again shortly, or use search_text.\n")
		} else {
			b.WriteString("No results.\n")
		}
		return Result{Output: b.String()}
	}
	var locs []Location
	for _, h := range res.Hits {
		rel := h.Path
		if r, err := filepath.Rel(env.Roots.Cwd(), h.Path); err == nil && !strings.HasPrefix(r, "..") {
			rel = filepath.ToSlash(r)
		}
		fmt.Fprintf(&b, "\n%s:%d-%d (score %.2f)\n", rel, h.StartLine, h.EndLine, h.Score)
		text := h.Text
		if text == "" {
			var err error
			if text, err = linesOf(env, h.Path, h.StartLine, h.EndLine); err != nil {
				text = "(not shown: " + err.Error() + ")"
			}
		}
		if text != "" {
			b.WriteString(clip.String(strings.TrimRight(text, "\n"), maxHitText, "\n…"))
			b.WriteString("\n")
		}
		locs = append(locs, Location{Path: h.Path, Line: h.StartLine})
	}
	return Result{Output: strings.TrimLeft(b.String(), "\n"), Locations: locs}
}

// linesOf reads lines start..end (1-based) of a file as it is on disk now, numbered as read_file
// numbers them; "" when the file is gone. It reads through an os.Root of the session's root
// that holds the file: a hit that became a link out of the roots since it was indexed is
// refused, not followed.
func linesOf(env *Env, path string, start, end int) (string, error) {
	data, err := env.Roots.ReadConfined(path, MaxFileBytes)
	if errors.Is(err, workspace.ErrOutsideRoots) || errors.Is(err, workspace.ErrTooLarge) {
		return "", err
	}
	if err != nil {
		return "", nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	for i := start; i <= end && i <= len(lines); i++ {
		if i < 1 {
			continue
		}
		fmt.Fprintf(&b, "%d\t%s", i, lines[i-1])
	}
	return b.String(), nil
}
