package acpdoor_test

// docs/acp holds what the ACP registry (github.com/agentclientprotocol/registry) needs to list
// agentd once releases exist: agent.json and icon.svg. These tests hold them to the registry's
// CONTRIBUTING.md validation rules, read 2026-12-02, so the entry is ready when a release is.

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	registryID     = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	registrySemver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)
	// The platform targets the registry knows.
	registryPlatforms = map[string]bool{"darwin-aarch64": true, "darwin-x86_64": true, "linux-aarch64": true,
		"linux-x86_64": true, "windows-aarch64": true, "windows-x86_64": true}
)

type registryEntry struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Description  string   `json:"description"`
	Repository   string   `json:"repository"`
	Authors      []string `json:"authors"`
	Distribution struct {
		Binary map[string]struct {
			Archive string   `json:"archive"`
			Cmd     string   `json:"cmd"`
			Args    []string `json:"args"`
		} `json:"binary"`
	} `json:"distribution"`
}

// checkRegistryEntry applies the registry's agent.json rules; it returns what breaks them.
func checkRegistryEntry(b []byte) []string {
	var bad []string
	var e registryEntry
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return []string{"agent.json: " + err.Error()}
	}
	if !registryID.MatchString(e.ID) {
		bad = append(bad, "id "+e.ID+" is not lowercase letters, digits and hyphens starting with a letter")
	}
	if e.Name == "" || e.Description == "" {
		bad = append(bad, "name and description are required")
	}
	if !registrySemver.MatchString(e.Version) {
		bad = append(bad, "version "+e.Version+" is not x.y.z")
	}
	if len(e.Distribution.Binary) == 0 {
		bad = append(bad, "no distribution")
	}
	oses := map[string]bool{}
	for platform, d := range e.Distribution.Binary {
		if !registryPlatforms[platform] {
			bad = append(bad, "unknown platform "+platform)
		}
		oses[strings.Split(platform, "-")[0]] = true
		switch {
		case d.Archive == "" || d.Cmd == "":
			bad = append(bad, platform+": archive and cmd are required")
		case strings.Contains(d.Archive, "/latest/"):
			bad = append(bad, platform+": the archive URL names latest")
		case !strings.Contains(d.Archive, "/download/v"+e.Version+"/"):
			bad = append(bad, platform+": the archive URL is not of version "+e.Version)
		case !strings.HasSuffix(d.Archive, ".tar.gz") && !strings.HasSuffix(d.Archive, ".zip"):
			bad = append(bad, platform+": the archive is not .tar.gz or .zip")
		}
		if len(d.Args) != 1 || d.Args[0] != "acp" {
			bad = append(bad, platform+": args must start the ACP door, [\"acp\"]")
		}
	}
	if len(oses) != 3 {
		bad = append(bad, "builds for darwin, linux and windows are expected")
	}
	return bad
}

// checkRegistryIcon applies the registry's icon rules: 16x16 and square, monochrome through
// currentColor (fill and stroke only currentColor, none or inherit, also in style attributes).
func checkRegistryIcon(b []byte) []string {
	var bad []string
	dec := xml.NewDecoder(strings.NewReader(string(b)))
	root := true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return append(bad, "icon.svg: "+err.Error())
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		attrs := map[string]string{}
		for _, a := range el.Attr {
			attrs[a.Name.Local] = a.Value
		}
		if root {
			root = false
			if el.Name.Local != "svg" || attrs["width"] != "16" || attrs["height"] != "16" || attrs["viewBox"] != "0 0 16 16" {
				bad = append(bad, "the root is not a 16x16 svg with viewBox 0 0 16 16")
			}
		}
		paint := func(name, v string) {
			switch strings.TrimSpace(v) {
			case "currentColor", "none", "inherit":
			default:
				bad = append(bad, el.Name.Local+": "+name+"="+v+" is a colour of its own")
			}
		}
		for _, name := range []string{"fill", "stroke", "color", "stop-color"} {
			if v, ok := attrs[name]; ok {
				paint(name, v)
			}
		}
		for _, decl := range strings.Split(attrs["style"], ";") {
			if k, v, ok := strings.Cut(decl, ":"); ok {
				switch strings.TrimSpace(k) {
				case "fill", "stroke", "color", "stop-color":
					paint(strings.TrimSpace(k), v)
				}
			}
		}
		if el.Name.Local == "image" || el.Name.Local == "style" {
			bad = append(bad, "icon.svg holds an "+el.Name.Local+" element")
		}
	}
	return bad
}

func TestRegistryEntry(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "docs", "acp")
	b, err := os.ReadFile(filepath.Join(dir, "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkRegistryEntry(b) {
		t.Error(p)
	}
	icon, err := os.ReadFile(filepath.Join(dir, "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range checkRegistryIcon(icon) {
		t.Error(p)
	}
}

// The checks refuse what the registry refuses.
func TestRegistryChecksRefuse(t *testing.T) {
	for _, icon := range []string{
		`<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24"><path fill="currentColor" d="M0 0h1v1z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path fill="#FF0000" d="M0 0h1v1z"/></svg>`,
		`<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 16 16"><path style="stroke: red" d="M0 0h1v1z"/></svg>`,
	} {
		if len(checkRegistryIcon([]byte(icon))) == 0 {
			t.Errorf("icon accepted: %s", icon)
		}
	}
	for _, entry := range []string{
		`{"id":"Agentd","name":"a","version":"0.1.0","description":"d","distribution":{"binary":{"linux-x86_64":{"archive":"https://x/download/v0.1.0/a.tar.gz","cmd":"./a","args":["acp"]}}}}`,
		`{"id":"agentd","name":"a","version":"0.1","description":"d","distribution":{"binary":{}}}`,
		`{"id":"agentd","name":"a","version":"0.1.0","description":"d","distribution":{"binary":{"linux-x86_64":{"archive":"https://x/releases/latest/a.tar.gz","cmd":"./a","args":["acp"]}}}}`,
		`{"id":"agentd","name":"a","version":"0.1.0","description":"d","icon_url":"x","distribution":{"binary":{}}}`,
	} {
		if len(checkRegistryEntry([]byte(entry))) == 0 {
			t.Errorf("entry accepted: %s", entry)
		}
	}
}
