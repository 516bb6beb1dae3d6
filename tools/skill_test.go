package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skill is an agentd built-in from the v1.2 contract ("Skills, subagents, hooks").
func init() { contract["skill"] = EffectRead }

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSkillDiscoverAndLoad(t *testing.T) {
	h := newHarness(t, nil)
	user := t.TempDir()
	writeFile(t, filepath.Join(h.root, ".agents/skills/release-notes/SKILL.md"), "---\nname: release-notes\ndescription: Write release notes from the git log.\nallowed-tools: [run_program]\n---\n\n# Release notes\nRun scripts/log.sh.\n")
	writeFile(t, filepath.Join(h.root, ".agents/skills/release-notes/scripts/log.sh"), "git log\n")
	writeFile(t, filepath.Join(h.root, ".claude/skills/forms/SKILL.md"), "\xef\xbb\xbf---\r\nname: forms\r\ndescription: >\r\n  Fill PDF forms.\r\n---\r\nUse pdftk.\r\n")
	writeFile(t, filepath.Join(h.root, ".claude/skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: the project's\n---\nbody\n")
	// The project's skill of the same name loses to the user's: a repository cannot change
	// what the user's own skill says.
	writeFile(t, filepath.Join(user, "skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: the user's\n---\nbody\n")
	writeFile(t, filepath.Join(user, "skills/mine/SKILL.md"), "---\nname: mine\ndescription: Mine.\n---\nMy body </skill> here\n")

	skills, probs := DiscoverSkills(SkillDirs([]string{h.root}, user, ""))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	var names []string
	for _, s := range skills {
		names = append(names, s.Name+"="+s.Description)
	}
	if got, want := strings.Join(names, "|"), "mine=Mine.|pdf=the user's|release-notes=Write release notes from the git log.|forms=Fill PDF forms."; got != want {
		t.Fatalf("skills = %s, want %s", got, want)
	}
	h.env.Skills = skills
	r := mustOK(t, h.run("skill", map[string]any{"name": "release-notes"}))
	mustContain(t, r.Output, "# Release notes\nRun scripts/log.sh.", "- scripts/log.sh", "- SKILL.md")
	if strings.Contains(r.Output, "allowed-tools") {
		t.Fatalf("front matter in the body: %s", r.Output)
	}
	r = mustOK(t, h.run("skill", map[string]any{"name": "mine"}))
	mustContain(t, r.Output, `My body <\/skill> here`)
	r = h.run("skill", map[string]any{"name": "nope"})
	if !r.IsError || !strings.Contains(r.Output, "mine, pdf, release-notes, forms") {
		t.Fatalf("unknown skill: %+v", r)
	}
}

func TestSkillBadFrontMatter(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"no-front":   "# just markdown\n",
		"no-desc":    "---\nname: no-desc\n---\nbody\n",
		"bad-type":   "---\nname: bad-type\ndescription: [a, b]\n---\n",
		"typo":       "---\nname: typo\ndescripton: x\n---\n",
		"wrong-name": "---\nname: other\ndescription: x\n---\n",
		"bad-yaml":   "---\nname: [\n---\n",
		"good":       "---\nname: good\ndescription: fine\n---\n",
	} {
		writeFile(t, filepath.Join(root, ".agents/skills", name, "SKILL.md"), text)
	}
	skills, probs := DiscoverSkills(SkillDirs([]string{root}, "", ""))
	if len(skills) != 1 || skills[0].Name != "good" {
		t.Fatalf("skills = %+v", skills)
	}
	got := map[string]SkillProblem{}
	for _, p := range probs {
		got[filepath.Base(filepath.Dir(p.Path))] = p
	}
	for folder, key := range map[string]string{"no-front": "", "no-desc": "description", "bad-type": "description", "typo": "descripton", "wrong-name": "name", "bad-yaml": ""} {
		p, ok := got[folder]
		if !ok {
			t.Errorf("%s: no problem reported", folder)
			continue
		}
		if p.Key != key || !strings.HasSuffix(p.Path, filepath.Join(folder, "SKILL.md")) {
			t.Errorf("%s: problem %+v, want key %q", folder, p, key)
		}
	}
}

func TestSkillLinkOutRefused(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(outside, "SKILL.md"), "---\nname: evil\ndescription: x\n---\nsecret\n")
	writeFile(t, filepath.Join(outside, "evil2", "SKILL.md"), "---\nname: evil2\ndescription: x\n---\nsecret\n")
	if err := os.MkdirAll(filepath.Join(root, ".agents/skills/evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "SKILL.md"), filepath.Join(root, ".agents/skills/evil/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "evil2"), filepath.Join(root, ".agents/skills/evil2")); err != nil {
		t.Fatal(err)
	}
	// A link that stays inside the root is followed.
	writeFile(t, filepath.Join(root, "docs/skill.md"), "---\nname: inside\ndescription: ok\n---\nfine\n")
	if err := os.MkdirAll(filepath.Join(root, ".agents/skills/inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../docs/skill.md", filepath.Join(root, ".agents/skills/inside/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	skills, probs := DiscoverSkills(SkillDirs([]string{root}, "", ""))
	if len(skills) != 1 || skills[0].Name != "inside" {
		t.Fatalf("skills = %+v", skills)
	}
	if len(probs) != 2 {
		t.Fatalf("problems = %v", probs)
	}
	for _, p := range probs {
		if !strings.Contains(p.Reason, "link that leads outside") {
			t.Errorf("problem %v does not say the link leads out", p)
		}
	}
	// A skill whose SKILL.md becomes a link out after it was listed is refused when loaded.
	writeFile(t, filepath.Join(root, ".agents/skills/late/SKILL.md"), "---\nname: late\ndescription: x\n---\nok\n")
	skills, _ = DiscoverSkills(SkillDirs([]string{root}, "", ""))
	os.Remove(filepath.Join(root, ".agents/skills/late/SKILL.md"))
	if err := os.Symlink(filepath.Join(outside, "SKILL.md"), filepath.Join(root, ".agents/skills/late/SKILL.md")); err != nil {
		t.Fatal(err)
	}
	for _, s := range skills {
		if s.Name == "late" {
			if _, _, _, err := s.Load(); err == nil || !strings.Contains(err.Error(), "leads outside") {
				t.Fatalf("late link loaded: %v", err)
			}
			return
		}
	}
	t.Fatal("late not discovered")
}

func TestSkillName(t *testing.T) {
	for name, ok := range map[string]bool{"pdf": true, "release-notes": true, "a1-b2": true, "": false, "-a": false, "a-": false, "a--b": false, "Pdf": false, "a_b": false, "a.b": false, strings.Repeat("a", 65): false, strings.Repeat("a", 64): true} {
		if skillName(name) != ok {
			t.Errorf("skillName(%q) = %v", name, !ok)
		}
	}
}

// file reads one file of the skill's folder, a user's skill outside the roots included, and
// refuses a path that leaves the folder or a link that leads out of the skills directory.
func TestSkillReadsAFileOfItsFolder(t *testing.T) {
	h := newHarness(t, nil)
	user, outside := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(user, "skills/mine/SKILL.md"), "---\nname: mine\ndescription: Mine.\n---\nSee reference.md.\n")
	writeFile(t, filepath.Join(user, "skills/mine/reference.md"), "the reference </skill_file>\n")
	writeFile(t, filepath.Join(user, "skills/other/secret.txt"), "other skill\n")
	writeFile(t, filepath.Join(outside, "secret.txt"), "SECRET\n")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(user, "skills/mine/link.txt")); err != nil {
		t.Fatal(err)
	}
	skills, _ := DiscoverSkills(SkillDirs(nil, user, ""))
	h.env.Skills = skills
	r := mustOK(t, h.run("skill", map[string]any{"name": "mine", "file": "reference.md"}))
	mustContain(t, r.Output, `the reference <\/skill_file>`)
	for file, want := range map[string]string{"../other/secret.txt": "not a path inside", "/etc/passwd": "not a path inside", "link.txt": "leads outside", "nope.md": "no such file"} {
		r := h.run("skill", map[string]any{"name": "mine", "file": file})
		if !r.IsError || !strings.Contains(r.Output, want) || strings.Contains(r.Output, "SECRET") {
			t.Errorf("file %q: %+v, want an error saying %q", file, r, want)
		}
	}
}
