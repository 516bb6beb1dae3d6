package tools

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentd-dev/agentd/tools/internal/glob"
)

type searchTextIn struct {
	Pattern         string   `json:"pattern" schema:"maxLength=2000"`
	Path            string   `json:"path,omitempty" schema:"maxLength=4096"`
	Literal         bool     `json:"literal,omitempty"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty"`
	Include         []string `json:"include,omitempty" schema:"maxItems=50"`
	Exclude         []string `json:"exclude,omitempty" schema:"maxItems=50"`
	MaxResults      int      `json:"max_results,omitempty" schema:"minimum=1,maximum=2000"`
	IncludeIgnored  bool     `json:"include_ignored,omitempty"`
}

func (in searchTextIn) title() string {
	if in.Pattern == "" {
		return ""
	}
	if in.Path != "" {
		return fmt.Sprintf("Search %q in %s", in.Pattern, in.Path)
	}
	return fmt.Sprintf("Search %q", in.Pattern)
}

// SearchText is the search_text tool.
var SearchText Tool = &typed[searchTextIn]{spec: Spec{Name: "search_text", Effect: EffectRead, Kind: "search", Title: "Search"}, run: searchText}

const searchPerFile = 50

func searchText(ctx context.Context, env *Env, in searchTextIn) Result {
	if in.Path == "" {
		in.Path = "."
	}
	start, bad := resolve(env, "path", in.Path, false)
	if bad != nil {
		return *bad
	}
	if _, err := os.Stat(start); err != nil {
		return Errorf("field path: %s does not exist", rel(env, start))
	}
	m, err := compileMatcher(in.Pattern, in.Literal, in.CaseInsensitive)
	if err != nil {
		return Errorf("%v", err)
	}
	inc, err := compileGlobs("include", in.Include)
	if err != nil {
		return Errorf("%v", err)
	}
	exc, err := compileGlobs("exclude", in.Exclude)
	if err != nil {
		return Errorf("%v", err)
	}
	maxResults := in.MaxResults
	if maxResults == 0 {
		maxResults = 100
	}
	var notes []string
	// Only the unsaved buffers under start are read: each read is a request to the editor.
	dirty := map[string]string{}
	if bufs, err := env.WS.DirtyBuffers(ctx); err == nil {
		for _, b := range bufs {
			if !within(start, b.Path) {
				continue
			}
			if _, err := env.Roots.Resolve(b.Path, false); err != nil {
				continue
			}
			if doc, err := env.WS.ReadFile(ctx, b.Path); err == nil {
				dirty[b.Path] = doc.Text
			}
		}
	} else if ctx.Err() == nil {
		notes = append(notes, "the editor could not list its unsaved buffers, so files were searched as saved on disk")
	}
	root := rootOf(env, start)
	if !in.IncludeIgnored {
		if st, err := os.Stat(start); err == nil && startIgnored(root, start, st.IsDir()) {
			in.IncludeIgnored = true
			notes = append(notes, fmt.Sprintf("%s is ignored by .gitignore; searched it anyway because you named it", rel(env, start)))
		}
	}
	out, err := search(ctx, searchOpts{
		Root: root, Start: start, Matcher: m, Include: inc, Exclude: exc,
		IncludeIgnored: in.IncludeIgnored, Dirty: dirty,
		MaxPerFile: searchPerFile, MaxKept: maxResults,
	})
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("search cancelled")
		}
		return Errorf("search failed: %v", err)
	}
	var b strings.Builder
	var locs []Location
	shown := 0
	full := false
	for _, f := range out.Files {
		if full {
			break
		}
		name := rel(env, f.Path)
		for _, lm := range f.Matches {
			if b.Len() >= MaxOutputBytes {
				full = true
				break
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", name, lm.Line, lm.Text)
			shown++
			if len(locs) < 50 {
				locs = append(locs, Location{Path: f.Path, Line: lm.Line})
			}
		}
		if len(f.Matches) < f.Count && len(f.Matches) > 0 && !full {
			fmt.Fprintf(&b, "%s: … %d more matching lines in this file\n", name, f.Count-len(f.Matches))
		}
	}
	if out.TotalMatches == 0 {
		b.WriteString("No matches.\n")
	}
	fmt.Fprintf(&b, "\n[%s in %s", plural(out.TotalMatches, "matching line"), plural(len(out.Files), "file"))
	if shown < out.TotalMatches {
		fmt.Fprintf(&b, "; showing %d (narrow the pattern, path or include globs to see the rest)", shown)
	}
	fmt.Fprintf(&b, "; %s searched", plural(out.Searched, "file"))
	if out.Streamed > 0 {
		fmt.Fprintf(&b, " (%d over 32 MB, in 4 MB pieces)", out.Streamed)
	}
	var skipped []string
	if out.Walk.Ignored > 0 {
		skipped = append(skipped, fmt.Sprintf("%d ignored by .gitignore", out.Walk.Ignored))
	}
	if out.Binary > 0 {
		skipped = append(skipped, fmt.Sprintf("%d binary", out.Binary))
	}
	if out.Filtered > 0 {
		skipped = append(skipped, fmt.Sprintf("%d left out by include/exclude", out.Filtered))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "; skipped: %s", strings.Join(skipped, ", "))
	}
	b.WriteString("]\n")
	if len(dirty) > 0 {
		fmt.Fprintf(&b, "[%s with unsaved changes searched as the editor has them.]\n", plural(len(dirty), "file"))
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "[Note: %s.]\n", n)
	}
	return Result{Output: b.String(), Locations: locs, Raw: map[string]any{
		"matches": out.TotalMatches, "files": len(out.Files), "shown": shown, "searched": out.Searched,
		"ignored": out.Walk.Ignored, "binary": out.Binary, "streamed": out.Streamed,
	}}
}

func compileGlobs(field string, pats []string) ([]*glob.Glob, error) {
	var out []*glob.Glob
	for i, p := range pats {
		if p == "" {
			return nil, fmt.Errorf("field %s[%d] is empty", field, i)
		}
		g, err := glob.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("field %s[%d]: %q is not a valid glob: %v", field, i, p, err)
		}
		out = append(out, g)
	}
	return out, nil
}
