package session

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools"
)

// maxSkillListBytes caps the skills' names and descriptions in the system prompt; the skills
// past it are counted, not listed (the skill tool still loads them by name).
const maxSkillListBytes = 8 << 10

// discoverSkills finds the session's skills: the project's under each workspace root, then the
// user's ($XDG_CONFIG_HOME/agentd/skills, ~/.agents/skills).
func (s *Session) discoverSkills() ([]tools.Skill, []tools.SkillProblem) {
	home, _ := os.UserHomeDir()
	skills, probs := tools.DiscoverSkills(tools.SkillDirs(s.roots.Dirs(), userConfigDir(), home))
	return append(skills, s.mcpSkills()...), probs
}

// skillsRun is what the skills add to the system prompt's run values: SKILLS (name and
// description of each, within the budget) and SKILLS_MORE (how many did not fit).
func skillsRun(skills []tools.Skill) prompts.Run {
	if len(skills) == 0 {
		return prompts.Run{}
	}
	var list []map[string]any
	budget := maxSkillListBytes
	for i, sk := range skills {
		desc := strings.Join(strings.Fields(sk.Description), " ")
		n := len(sk.Name) + len(desc) + 8
		if n > budget {
			return prompts.Run{"SKILLS": list, "SKILLS_MORE": strconv.Itoa(len(skills) - i)}
		}
		budget -= n
		list = append(list, map[string]any{"NAME": sk.Name, "DESCRIPTION": escapeClosing(desc)})
	}
	return prompts.Run{"SKILLS": list}
}

// escapeClosing keeps a text the system prompt quotes from closing an envelope around it.
func escapeClosing(text string) string {
	return closingInstructions.ReplaceAllStringFunc(text, func(m string) string { return "<\\/" + m[2:] })
}

func sameSkills(a, b []tools.Skill) bool {
	return slices.EqualFunc(a, b, func(x, y tools.Skill) bool {
		return x.Name == y.Name && x.Description == y.Description && x.Path == y.Path
	})
}

func problemsText(probs []tools.SkillProblem) string {
	lines := make([]string, len(probs))
	for i, p := range probs {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// skills are the skills the session's system prompt lists, for the skill tool.
func (s *Session) skills() []tools.Skill {
	s = s.top()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil {
		return nil
	}
	return s.instr.skills
}

// noticeSkills tells the user which SKILL.md files were not loaded, and why.
func (s *Session) noticeSkills(probs string) {
	if probs != "" {
		s.notice(protocol.SeverityWarning, "Skills not loaded", probs)
	}
}

// skillProblems are the SKILL.md files the last discovery did not load, one line each.
func (s *Session) skillProblems() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.instr == nil {
		return ""
	}
	return s.instr.problems
}
