package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Skills over MCP (the Skills extension, io.modelcontextprotocol/skills, SEP-2640, final
// 2026-09-13): each file of a skill is a resource of its server, the skill's SKILL.md at
// skill://<path>/SKILL.md, the path's last segment the skill's name. The extension's own
// skills/list and skills/get cannot be sent: the SDK's ClientSession has no call for a method it
// does not know (v1.8.0), so the skills are found, as the SEP lets any client find them, among the
// server's listed resources. Nothing of a skill is read before the model loads it (the SEP's
// no-prefetch rule).

// ServerSkill is one skill a server serves.
type ServerSkill struct {
	Server, Name, Description, URI string
}

// skillsWait bounds the resource listing a skill discovery waits for: discovery runs at every
// turn's start (and at session/new), which a slow server must not hold up.
const skillsWait = 2 * time.Second

// maxSkillBytes bounds one file of a server's skill, as a SKILL.md on disk is bounded.
const maxSkillBytes = 256 << 10

// Skills lists the skills of the set's servers that are ready; a server still starting is
// skipped (its skills join at the next turn).
func (s *Set) Skills(ctx context.Context) []ServerSkill {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, skillsWait)
	defer cancel()
	var out []ServerSkill
	for _, sv := range servers {
		if !sv.hasResources() {
			continue
		}
		rl, err := sv.resources(ctx)
		if err != nil {
			continue
		}
		for _, r := range rl {
			if name, ok := skillOf(r.URI); ok {
				desc := r.Description
				if desc == "" {
					desc = r.Title
				}
				out = append(out, ServerSkill{Server: r.Server, Name: name, Description: desc, URI: r.URI})
			}
		}
	}
	return out
}

// skillOf is the name of the skill whose SKILL.md is at uri (skill://…/NAME/SKILL.md).
func skillOf(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, "skill://")
	if !ok {
		return "", false
	}
	dir, ok := strings.CutSuffix(rest, "/SKILL.md")
	if !ok || dir == "" {
		return "", false
	}
	name := dir[strings.LastIndexByte(dir, '/')+1:]
	if !validToolName(name) || strings.ToLower(name) != name {
		return "", false
	}
	return name, true
}

// ReadSkill reads a skill's SKILL.md (rel "") or the file rel of its folder (a slash path inside
// it, no ..), on the skill's server, raw: the caller frames it.
func (s *Set) ReadSkill(ctx context.Context, sk ServerSkill, rel string) (string, error) {
	uri := sk.URI
	if rel != "" {
		if !fs.ValidPath(rel) || rel == "." {
			return "", errors.New("not a path inside the skill's folder (use a relative path such as references/API.md, without ..)")
		}
		uri = strings.TrimSuffix(sk.URI, "SKILL.md") + rel
	}
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	for _, sv := range servers {
		if Clean(sv.cfg.Name, maxLabel) != sk.Server {
			continue
		}
		sv.mu.Lock()
		cs := sv.cs
		sv.mu.Unlock()
		if cs == nil {
			return "", fmt.Errorf("the MCP server %s is not running", sk.Server)
		}
		rctx, cancel := context.WithTimeout(ctx, sv.cfg.Timeout)
		defer cancel()
		res, err := cs.ReadResource(rctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			return "", fmt.Errorf("the MCP server %s failed to read %s: %s", sk.Server, Clean(uri, 200), Clean(sizeError(err).Error(), 300))
		}
		var b strings.Builder
		for _, c := range res.Contents {
			if c != nil && c.Text != "" {
				b.WriteString(cleanText(c.Text))
			}
		}
		if b.Len() > maxSkillBytes {
			return "", fmt.Errorf("%s is larger than %d KiB", Clean(uri, 200), maxSkillBytes>>10)
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("no MCP server named %s", sk.Server)
}
