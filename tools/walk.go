package tools

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Directory walks (list_dir, search_text, project_overview, the symbol scan) read the tree under
// the roots from disk: the editor has no listing to offer. Ignore rules are the .gitignore files
// from the root down, .git/info/exclude and .ignore, loaded as the walk descends.

// ignoreRules is the stack of patterns that apply in one directory. It is never mutated once
// built, so walkers in parallel share it.
type ignoreRules struct {
	patterns []ignorePattern
}

func (r *ignoreRules) ignored(parts []string, isDir bool) bool {
	if r == nil {
		return false
	}
	for i := len(r.patterns) - 1; i >= 0; i-- {
		switch r.patterns[i].match(parts, isDir) {
		case ignoreExclude:
			return true
		case ignoreInclude:
			return false
		}
	}
	return false
}

// child returns the rules for subdirectory dir (absolute, with domain parts) given its listing.
func (r *ignoreRules) child(dir string, parts []string, hasIgnoreFile bool) *ignoreRules {
	if !hasIgnoreFile {
		return r
	}
	var add []ignorePattern
	for _, name := range []string{".gitignore", ".ignore"} {
		add = append(add, readPatterns(filepath.Join(dir, name), parts)...)
	}
	if len(add) == 0 {
		return r
	}
	var base []ignorePattern
	if r != nil {
		base = r.patterns
	}
	return &ignoreRules{patterns: append(slices.Clip(base), add...)}
}

func readPatterns(file string, domain []string) []ignorePattern {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var ps []ignorePattern
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, parseIgnorePattern(line, domain))
	}
	return ps
}

// rootRules loads the rules that apply in dir, a directory under root: root's .git/info/exclude
// and every ignore file from root down to dir.
func rootRules(root, dir string) *ignoreRules {
	r := &ignoreRules{patterns: readPatterns(filepath.Join(root, ".git", "info", "exclude"), nil)}
	relDir, err := filepath.Rel(root, dir)
	if err != nil || strings.HasPrefix(relDir, "..") {
		return r
	}
	var parts []string
	r = r.child(root, nil, true)
	if relDir == "." {
		return r
	}
	cur := root
	for _, p := range strings.Split(filepath.ToSlash(relDir), "/") {
		parts = append(parts, p)
		cur = filepath.Join(cur, p)
		r = r.child(cur, slices.Clone(parts), true)
	}
	return r
}

// rootOf is the root holding abs (abs when none does, which Resolve prevents).
func rootOf(env *Env, abs string) string {
	for _, d := range env.Roots.Dirs() {
		if within(d, abs) {
			return d
		}
	}
	return abs
}

// within reports whether abs is dir or lies under it.
func within(dir, abs string) bool {
	return abs == dir || strings.HasPrefix(abs, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// relParts splits abs relative to root into path components.
func relParts(root, abs string) []string {
	r, err := filepath.Rel(root, abs)
	if err != nil || r == "." {
		return nil
	}
	return strings.Split(filepath.ToSlash(r), "/")
}

// walkStats counts what a walk left out.
type walkStats struct {
	Ignored    int // gitignored entries (a directory counts once)
	VCS        int // .git directories
	DepthCut   int // directories not entered because of the depth limit
	Unreadable int
}

// walkEntry is one entry the walk visits.
type walkEntry struct {
	Abs   string
	Parts []string // relative to the root
	Depth int      // 1 for a direct child of the start directory
	Entry fs.DirEntry
}

type walkOpts struct {
	includeIgnored bool
	maxDepth       int // 0: unlimited
}

// walk visits the tree under start (a directory inside root) in sorted order, depth first. visit
// returning fs.SkipDir for a directory skips it; fs.SkipAll stops the walk.
func walk(ctx context.Context, root, start string, o walkOpts, visit func(walkEntry) error) (walkStats, error) {
	var st walkStats
	var rules *ignoreRules
	if !o.includeIgnored {
		rules = rootRules(root, start)
	}
	var rec func(dir string, parts []string, depth int, rules *ignoreRules) error
	rec = func(dir string, parts []string, depth int, rules *ignoreRules) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			st.Unreadable++
			return nil
		}
		if !o.includeIgnored && depth > 0 {
			rules = rules.child(dir, parts, hasIgnoreFile(ents))
		}
		for _, e := range ents {
			name := e.Name()
			isDir := e.IsDir()
			if isDir && name == ".git" {
				st.VCS++
				continue
			}
			cp := append(slices.Clip(parts), name)
			if rules.ignored(cp, isDir) {
				st.Ignored++
				continue
			}
			we := walkEntry{Abs: filepath.Join(dir, name), Parts: cp, Depth: depth + 1, Entry: e}
			err := visit(we)
			if err == fs.SkipAll {
				return err
			}
			if !isDir || err == fs.SkipDir {
				continue
			}
			if err != nil {
				return err
			}
			if o.maxDepth > 0 && depth+1 >= o.maxDepth {
				st.DepthCut++
				continue
			}
			if err := rec(we.Abs, cp, depth+1, rules); err != nil {
				return err
			}
		}
		return nil
	}
	err := rec(start, relParts(root, start), 0, rules)
	if err == fs.SkipAll {
		err = nil
	}
	return st, err
}

func hasIgnoreFile(ents []fs.DirEntry) bool {
	for _, e := range ents {
		if n := e.Name(); n == ".gitignore" || n == ".ignore" {
			return true
		}
	}
	return false
}

// startIgnored reports whether start itself is ignored by the rules above it: a walk the model
// pointed at such a directory on purpose (node_modules/pkg, build/) then includes ignored files.
func startIgnored(root, start string, isDir bool) bool {
	parts := relParts(root, start)
	if len(parts) == 0 {
		return false
	}
	rules := rootRules(root, filepath.Dir(start))
	for i := 1; i <= len(parts); i++ {
		if rules.ignored(parts[:i], i < len(parts) || isDir) {
			return true
		}
	}
	return false
}
