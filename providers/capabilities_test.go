package providers

import (
	"testing"

	"github.com/agentd-dev/agentd/config"
)

func TestModelCapabilities(t *testing.T) {
	cases := []struct {
		model string
		want  Capabilities
		known bool
	}{
		{"claude-sonnet-4-5", caps(true, true, true, 200000), true},
		{"claude-3-5-haiku-latest", caps(true, true, false, 200000), true},
		{"anthropic/claude-3.7-sonnet", caps(true, true, true, 200000), true},
		{"gpt-4o-mini", caps(true, true, false, 128000), true},
		{"openai/gpt-4.1", caps(true, true, false, 1047576), true},
		{"gpt-5", caps(true, true, true, 400000), true},
		{"gpt-5-chat-latest", caps(true, true, false, 128000), true},
		{"o3-mini", caps(true, false, true, 200000), true},
		{"gemini-2.5-pro", caps(true, true, true, 1048576), true},
		{"gemini-2.0-flash", caps(true, true, false, 1048576), true},
		{"qwen2.5-coder:7b", caps(true, false, false, 32768), true},
		{"Qwen/Qwen2.5-Coder-32B-Instruct", caps(true, false, false, 32768), true},
		{"qwen2.5vl:7b", caps(true, true, false, 128000), true},
		{"llama3.1:8b", caps(true, false, false, 131072), true},
		{"meta-llama/Llama-3.3-70B-Instruct", caps(true, false, false, 131072), true},
		{"llama3:8b", caps(false, false, false, 8192), true},
		{"llama3.2-vision", caps(false, true, false, 131072), true},
		{"deepseek-coder:6.7b", caps(false, false, false, 16384), true},
		{"deepseek-coder-v2:16b", caps(false, false, false, 163840), true},
		{"deepseek-r1:14b", caps(false, false, true, 131072), true},
		{"mistral:7b", caps(true, false, false, 32768), true},
		{"gemma3:4b", caps(false, true, false, 131072), true},
		{"my-finetune", unknownModel, false},
		{"", unknownModel, false},
	}
	for _, c := range cases {
		got, known := ModelCapabilities(c.model)
		if got != c.want || known != c.known {
			t.Errorf("%q: %+v known=%v, want %+v known=%v", c.model, got, known, c.want, c.known)
		}
	}
}

func TestCapabilitiesOfSettings(t *testing.T) {
	no, yes := false, true
	ps := config.ProviderSettings{Model: "qwen2.5-coder:7b", ContextWindow: 16384}
	if c := CapabilitiesOf(ps); c != caps(true, false, false, 16384) {
		t.Fatalf("contextWindow not applied: %+v", c)
	}
	ps.Capabilities = &config.Capabilities{Tools: &no, Images: &yes, ContextWindow: 65536}
	if c := CapabilitiesOf(ps); c != caps(false, true, false, 65536) {
		t.Fatalf("override not applied: %+v", c)
	}
}

func caps(tools, images, thinking bool, window int) Capabilities {
	return Capabilities{Tools: tools, Images: images, Thinking: thinking, ContextWindow: window}
}

// TestFamiliesUnique holds the table to one row per prefix: the longest matching prefix is then
// one row, whatever the table's order.
func TestFamiliesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range families {
		if seen[f.prefix] {
			t.Errorf("two rows for %q", f.prefix)
		}
		seen[f.prefix] = true
	}
}
