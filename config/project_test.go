package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeProject(t *testing.T, root, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, ".agentd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if content != "" {
		if err := os.WriteFile(ProjectConfigPath(root), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Each session's project layer is its own root's: a trusted repository's loosening never
// reaches a hostile repository opened after it in the same daemon, and a hostile file that does
// not load applies nothing (it does not keep the trusted layer in force).
func TestProjectLayersAreKeptApart(t *testing.T) {
	trusted, hostile := t.TempDir(), t.TempDir()
	writeProject(t, trusted, `{"mode":"auto","allowShell":true,"maxIterations":99}`)
	s := NewStore()
	user, _ := json.Marshal(map[string]any{"trustedProjects": []string{trusted}})
	if err := s.Set(LayerUser, user); err != nil {
		t.Fatal(err)
	}
	tp := s.LoadProject(trusted)
	if got := s.For(tp); got.Mode != ModeAuto || !got.AllowShell || got.MaxIterations != 99 {
		t.Fatalf("the trusted project does not loosen: mode %q shell %v", got.Mode, got.AllowShell)
	}
	for name, content := range map[string]string{
		"unknown key": `{"mode":"plan","nope":1}`,
		"not json":    `{"mode":`,
		"a directory": "",
		"loosening":   `{"mode":"auto","allowShell":true}`,
		"none":        "-",
	} {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(hostile, strings.ReplaceAll(name, " ", "-"))
			switch content {
			case "-":
				if err := os.MkdirAll(root, 0o755); err != nil {
					t.Fatal(err)
				}
			case "":
				writeProject(t, root, "")
				if err := os.Mkdir(ProjectConfigPath(root), 0o755); err != nil {
					t.Fatal(err)
				}
			default:
				writeProject(t, root, content)
			}
			hp := s.LoadProject(root)
			got := s.For(hp)
			if got.Mode != ModeAsk || got.AllowShell || got.MaxIterations == 99 {
				t.Fatalf("the hostile project runs with mode %q, shell %v, maxIterations %d", got.Mode, got.AllowShell, got.MaxIterations)
			}
			if content != "-" && !strings.Contains(got.ProjectNotice, ProjectConfigPath(root)) {
				t.Fatalf("no notice naming the file: %q", got.ProjectNotice)
			}
			if content == "-" && got.ProjectNotice != "" {
				t.Fatalf("a project without a file got a notice: %q", got.ProjectNotice)
			}
			// And the trusted one keeps its own.
			if s.For(tp).Mode != ModeAuto {
				t.Fatal("loading another project changed the trusted one's layer")
			}
		})
	}
}

// A project's merge follows the user's layers as they change.
func TestProjectLayerFollowsTheUserLayers(t *testing.T) {
	root := t.TempDir()
	writeProject(t, root, `{"mode":"auto"}`)
	s := NewStore()
	p := s.LoadProject(root)
	if s.For(p).Mode != ModeAsk {
		t.Fatal("an untrusted project loosened the mode")
	}
	user, _ := json.Marshal(map[string]any{"trustedProjects": []string{root}})
	if err := s.Set(LayerClient, user); err != nil {
		t.Fatal(err)
	}
	if got := s.For(p).Mode; got != ModeAuto {
		t.Fatalf("mode = %q once the user trusts the project", got)
	}
}

// Switching a model to the text tool protocol is a loosening (there an envelope the model only
// quotes may run): an untrusted project may not, by toolCalling "text" or by turning the model's
// native tools off; it may still pick native tools or none, and a trusted project may switch.
func TestProjectMayNotSwitchAModelToTheTextProtocol(t *testing.T) {
	for content, want := range map[string]struct {
		calling string
		tools   *bool
		ignored string
	}{
		`{"providers":{"anthropic":{"toolCalling":"text"}}}`:           {ignored: "providers.anthropic.toolCalling"},
		`{"providers":{"anthropic":{"capabilities":{"tools":false}}}}`: {ignored: "providers.anthropic.capabilities.tools"},
		`{"providers":{"anthropic":{"toolCalling":"none"}}}`:           {calling: ToolCallingNone},
		`{"providers":{"anthropic":{"toolCalling":"native"}}}`:         {calling: ToolCallingNative},
		`{"providers":{"anthropic":{"capabilities":{"tools":true}}}}`:  {tools: new(true)},
	} {
		root := t.TempDir()
		writeProject(t, root, content)
		s := NewStore()
		got := s.For(s.LoadProject(root))
		ps := got.Providers["anthropic"]
		if ps.ToolCalling != want.calling {
			t.Errorf("%s: toolCalling = %q, want %q", content, ps.ToolCalling, want.calling)
		}
		var tools *bool
		if ps.Capabilities != nil {
			tools = ps.Capabilities.Tools
		}
		if (tools == nil) != (want.tools == nil) || tools != nil && *tools != *want.tools {
			t.Errorf("%s: capabilities.tools = %v, want %v", content, tools, want.tools)
		}
		if want.ignored != "" && !strings.Contains(got.ProjectNotice, want.ignored) {
			t.Errorf("%s: the notice does not name %s: %q", content, want.ignored, got.ProjectNotice)
		}
	}
	// A project the user trusts may switch.
	root := t.TempDir()
	writeProject(t, root, `{"providers":{"anthropic":{"toolCalling":"text"}}}`)
	s := NewStore()
	user, _ := json.Marshal(map[string]any{"trustedProjects": []string{root}})
	if err := s.Set(LayerUser, user); err != nil {
		t.Fatal(err)
	}
	if got := s.For(s.LoadProject(root)).Providers["anthropic"].ToolCalling; got != ToolCallingText {
		t.Errorf("a trusted project's toolCalling = %q, want text", got)
	}
}

// For is safe to call while the user's layers change (go test -race).
func TestProjectForDuringSet(t *testing.T) {
	root := t.TempDir()
	writeProject(t, root, `{"maxIterations":5}`)
	s := NewStore()
	p := s.LoadProject(root)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			_ = s.Set(LayerClient, []byte(`{"maxTokens":`+string(rune('1'+i%9))+`000}`))
		}
	}()
	for range 50 {
		if got := s.For(p).MaxIterations; got != 5 {
			t.Errorf("maxIterations = %d", got)
		}
	}
	<-done
}
