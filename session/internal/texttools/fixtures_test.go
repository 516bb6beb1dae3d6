package texttools_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/anthropic"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/openai"
	"github.com/agentd-dev/agentd/providers/providertest"
	"github.com/agentd-dev/agentd/session/internal/texttools"
)

// TestSmallModelStreams replays streams written from the documented chat templates and output
// shapes of small local models (testdata/textproto/README.md), each through a different dialect,
// under the text protocol: the prose a user sees, the calls that run, and where a model that
// imitated a tool response was cut.
func TestSmallModelStreams(t *testing.T) {
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "textproto")
	dialects := map[string]providertest.NewFunc{
		"openai":    openai.NewWithTransport,
		"anthropic": anthropic.NewWithTransport,
		"gemini":    gemini.NewWithTransport,
	}
	cases := []struct {
		file  string
		text  string
		calls []string // name + " " + args, or "!" + the error
	}{
		{file: "qwen2.5-coder.openai.sse", text: "I'll look at the file first.\n",
			calls: []string{`read_file {"path": "src/sum.go"}`, `search_text {"pattern": "func Sum", "literal": true}`}},
		{file: "qwen2.5-coder-respond.openai.sse",
			calls: []string{`respond {"text": "The bug is on line 3: the loop stops at ` + "`len(xs)-1`" + `, so the last item is never added."}`}},
		{file: "llama3.1.anthropic.sse", text: "Let me list the directory.\n\n",
			calls: []string{`list_dir {"path": ".", "depth": 1}`}},
		// The fenced call is shown, not run (a fence is how a README quotes a call); the loop
		// tells the model to write it again on a line of its own.
		{file: "deepseek-coder.gemini.sse", text: "Sure! Here is the call:\n```json\n<tool_call>\n{'name': 'read_file', 'arguments': {'path': 'README.md',},}\n</tool_call>\n```\n",
			calls: []string{`!get_diagnostics`}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			dialect := strings.Split(c.file, ".")[len(strings.Split(c.file, "."))-2]
			srv := providertest.Serve(t, filepath.Join(dir, c.file))
			cfg := providers.Config{ID: "local", APIType: dialect, BaseURL: srv.URL, Model: "m", APIKey: "k"}
			p, err := dialects[dialect](cfg, providertest.Transport(&providertest.Sleeps{}))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			invalid := func(c texttools.Call) string { return "could not read the call: " + c.Err }
			o := providertest.Collect(t, texttools.Events(p.Stream(ctx, &providers.Request{Model: "m", MaxTokens: 100}), "call", invalid))
			if o.Err != nil {
				t.Fatalf("failed: %v", o.Err)
			}
			if o.Text != c.text {
				t.Errorf("text = %q, want %q", o.Text, c.text)
			}
			var got []string
			for _, tc := range o.ToolCalls {
				got = append(got, tc.Name+" "+tc.RawArgs)
			}
			var bad []string
			for _, ev := range o.Events {
				if ev.Type == providers.EventNotice && ev.ToolCallID != "" {
					bad = append(bad, "!"+ev.ToolName)
					if !strings.HasPrefix(ev.Text, "could not read the call: ") {
						t.Errorf("notice %q is not the invalid text", ev.Text)
					}
				}
			}
			got = append(got, bad...)
			if strings.Join(got, "\n") != strings.Join(c.calls, "\n") {
				t.Errorf("calls =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.calls, "\n"))
			}
			if strings.Contains(o.Text, "main.go") || strings.Contains(strings.ReplaceAll(o.Text, "<tool_call>\n{'name': 'read_file'", ""), "tool_response") {
				t.Errorf("text shows what belongs to an envelope or follows a cut: %q", o.Text)
			}
		})
	}
}
