package tools

import (
	"path/filepath"
	"strings"
)

// ignorePattern is one line of a .gitignore, .ignore or .git/info/exclude file, matched against
// a path split into components. Its semantics are go-git's plumbing/format/gitignore Pattern
// (Apache-2.0), which the walks used before: that package linked go-git's config parser and with
// it encoding/gob into the binary, whose package initialisation every start-up paid for.
//
// A pattern applies below its domain (the directory holding the file, as components); "!"
// re-includes, a trailing "/" matches directories only, a "/" elsewhere anchors the pattern to
// the domain (and lets "**" match any number of directories), and a pattern without one matches
// a name at any depth.
type ignorePattern struct {
	domain    []string
	pattern   []string
	inclusion bool
	dirOnly   bool
	isGlob    bool
}

type ignoreResult int

const (
	ignoreNoMatch ignoreResult = iota
	ignoreExclude
	ignoreInclude
)

// parseIgnorePattern parses one non-blank, non-comment line found in directory domain.
func parseIgnorePattern(p string, domain []string) ignorePattern {
	res := ignorePattern{domain: append([]string(nil), domain...)}
	if strings.HasPrefix(p, "!") {
		res.inclusion = true
		p = p[1:]
	}
	if !strings.HasSuffix(p, "\\ ") {
		p = strings.TrimRight(p, " ")
	}
	if strings.HasSuffix(p, "/") {
		res.dirOnly = true
		p = p[:len(p)-1]
	}
	res.isGlob = strings.Contains(p, "/")
	res.pattern = strings.Split(p, "/")
	return res
}

// match reports whether path (components from the walk's root) is excluded, re-included or not
// named by the pattern.
func (p *ignorePattern) match(path []string, isDir bool) ignoreResult {
	if len(path) <= len(p.domain) {
		return ignoreNoMatch
	}
	for i, e := range p.domain {
		if path[i] != e {
			return ignoreNoMatch
		}
	}
	path = path[len(p.domain):]
	if p.isGlob && !p.globMatch(path, isDir) || !p.isGlob && !p.nameMatch(path, isDir) {
		return ignoreNoMatch
	}
	if p.inclusion {
		return ignoreInclude
	}
	return ignoreExclude
}

// nameMatch matches a pattern without "/" against any component of path.
func (p *ignorePattern) nameMatch(path []string, isDir bool) bool {
	for i, name := range path {
		if match, err := filepath.Match(p.pattern[0], name); err != nil {
			return false
		} else if !match {
			continue
		}
		if p.dirOnly && !isDir && i == len(path)-1 {
			return false
		}
		return true
	}
	return false
}

// globMatch matches an anchored pattern component by component, "**" standing for any number
// of directories.
func (p *ignorePattern) globMatch(path []string, isDir bool) bool {
	matched := false
	canTraverse := false
	for i, pattern := range p.pattern {
		if pattern == "" {
			canTraverse = false
			continue
		}
		if pattern == "**" {
			if i == len(p.pattern)-1 {
				break
			}
			canTraverse = true
			continue
		}
		if strings.Contains(pattern, "**") {
			return false
		}
		if len(path) == 0 {
			return false
		}
		if canTraverse {
			canTraverse = false
			for len(path) > 0 {
				e := path[0]
				path = path[1:]
				if match, err := filepath.Match(pattern, e); err != nil {
					return false
				} else if match {
					matched = true
					break
				} else if len(path) == 0 {
					matched = false
				}
			}
		} else {
			if match, err := filepath.Match(pattern, path[0]); err != nil || !match {
				return false
			}
			matched = true
			path = path[1:]
		}
	}
	if matched && p.dirOnly && !isDir && len(path) == 0 {
		matched = false
	}
	return matched
}
