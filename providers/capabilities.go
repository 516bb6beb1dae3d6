package providers

import (
	"strings"

	"github.com/agentd-dev/agentd/config"
)

// Capabilities is what a model can do: call tools natively, read images, reason visibly, and how
// many tokens its context window holds.
type Capabilities struct {
	Tools         bool `json:"tools"`
	Images        bool `json:"images"`
	Thinking      bool `json:"thinking"`
	ContextWindow int  `json:"contextWindow"`
}

// DefaultContextWindow is the window of a model the table does not know.
const DefaultContextWindow = 128000

// unknownModel is what a model the table does not know is taken to have: everything, so that
// agentd refuses nothing it cannot know is missing. Its server says what it lacks (a refused
// tools declaration switches to the text protocol by itself), and the provider's
// `capabilities` setting says it once for good.
var unknownModel = Capabilities{Tools: true, Images: true, Thinking: true, ContextWindow: DefaultContextWindow}

// family is one row of the table: models whose normalized name starts with prefix. Its fields
// are constants, not a Capabilities built by a call, so that the compiler lays the table out in
// the binary instead of the package's init building it at every start.
type family struct {
	prefix                  string
	tools, images, thinking bool
	window                  int
}

func (f *family) caps() Capabilities {
	return Capabilities{Tools: f.tools, Images: f.images, Thinking: f.thinking, ContextWindow: f.window}
}

// families are the known model families, from the vendors' model pages (and, for open-weight
// models, what Ollama's library marks as tools / vision / thinking). Names are matched after
// normalize, by the longest prefix, so a specific row ("gpt4o") wins over its family ("gpt4").
var families = [...]family{
	// Anthropic: every Claude model takes tools and images; extended thinking from 3.7 on.
	{"claude", true, true, true, 200000},
	{"claude3", true, true, false, 200000},
	{"claude35", true, true, false, 200000},
	{"claude37", true, true, true, 200000},
	{"claudeinstant", false, false, false, 100000},
	{"claude2", false, false, false, 200000},
	// OpenAI.
	{"gpt35", true, false, false, 16385},
	{"gpt4", true, false, false, 8192},
	{"gpt4turbo", true, true, false, 128000},
	{"gpt4o", true, true, false, 128000},
	{"gpt41", true, true, false, 1047576},
	{"gpt5", true, true, true, 400000},
	{"gpt5chat", true, true, false, 128000},
	{"gptoss", true, false, true, 131072},
	{"o1", true, true, true, 200000},
	{"o1mini", false, false, true, 128000},
	{"o1preview", false, false, true, 128000},
	{"o3", true, true, true, 200000},
	{"o3mini", true, false, true, 200000},
	{"o4mini", true, true, true, 200000},
	// Google.
	{"gemini", true, true, false, 1048576},
	{"gemini15pro", true, true, false, 2097152},
	{"gemini25", true, true, true, 1048576},
	{"gemini3", true, true, true, 1048576},
	{"gemma", false, false, false, 8192},
	{"gemma3", false, true, false, 131072},
	// Alibaba's Qwen.
	{"qwen", true, false, false, 32768},
	{"qwen2", true, false, false, 32768},
	{"qwen25", true, false, false, 32768},
	{"qwen25coder", true, false, false, 32768},
	{"qwen25vl", true, true, false, 128000},
	{"qwen2vl", false, true, false, 32768},
	{"qwenvl", false, true, false, 32768},
	{"qwen3", true, false, true, 40960},
	{"qwen3coder", true, false, false, 262144},
	{"qwen3vl", true, true, true, 262144},
	{"qwq", true, false, true, 40960},
	// Meta's Llama: 3.0 has no tool calling; 3.1 and later do, with 128K windows.
	{"llama2", false, false, false, 4096},
	{"llama3", false, false, false, 8192},
	{"llama31", true, false, false, 131072},
	{"llama32", true, false, false, 131072},
	{"llama32vision", false, true, false, 131072},
	{"llama33", true, false, false, 131072},
	{"llama4", true, true, false, 1048576},
	{"codellama", false, false, false, 16384},
	// DeepSeek: the coder models have no tool calling; R1 reasons without tools.
	{"deepseekcoder", false, false, false, 16384},
	{"deepseekcoderv2", false, false, false, 163840},
	{"deepseekchat", true, false, false, 131072},
	{"deepseekv3", true, false, false, 131072},
	{"deepseekreasoner", true, false, true, 131072},
	{"deepseekr1", false, false, true, 131072},
	// Mistral.
	{"mistral", true, false, false, 32768},
	{"mistrallarge", true, false, false, 131072},
	{"mistralsmall", true, true, false, 131072},
	{"mistralnemo", true, false, false, 131072},
	{"mixtral", true, false, false, 32768},
	{"codestral", true, false, false, 262144},
	{"devstral", true, false, false, 131072},
	{"pixtral", true, true, false, 131072},
	{"magistral", true, false, true, 40960},
	// Others commonly run locally.
	{"phi3", false, false, false, 131072},
	{"phi4", false, false, false, 16384},
	{"phi4mini", true, false, false, 131072},
	{"starcoder", false, false, false, 16384},
	{"granite3", true, false, false, 131072},
	{"llava", false, true, false, 4096},
	{"bakllava", false, true, false, 4096},
	{"moondream", false, true, false, 2048},
}

// normalize reduces a model name to what the table matches: lower case, without a vendor or
// path prefix ("openai/", "meta-llama/", "hf.co/…/"), a release date or tag after ':' or '@'
// kept but the punctuation between words dropped, so "Llama-3.1-8B-Instruct", "llama3.1:8b"
// and "meta-llama/llama-3.1-8b" all start with "llama31".
func normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	var b strings.Builder
	for i := 0; i < len(m); i++ {
		switch c := m[i]; c {
		case '-', '_', '.', ' ':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ModelCapabilities is what the built-in table says model can do, and whether the table knows
// the model at all.
func ModelCapabilities(model string) (Capabilities, bool) {
	n := normalize(model)
	if n == "" {
		return unknownModel, false
	}
	var best *family
	for i := range families {
		if f := &families[i]; strings.HasPrefix(n, f.prefix) && (best == nil || len(f.prefix) > len(best.prefix)) {
			best = f
		}
	}
	if best == nil {
		return unknownModel, false
	}
	return best.caps(), true
}

// CapabilitiesOf is what the provider's model can do under its settings: the table's row for the
// model, then the provider's contextWindow, then each field its capabilities setting gives.
func CapabilitiesOf(ps config.ProviderSettings) Capabilities {
	c, _ := ModelCapabilities(ps.Model)
	if ps.ContextWindow > 0 {
		c.ContextWindow = ps.ContextWindow
	}
	if o := ps.Capabilities; o != nil {
		if o.Tools != nil {
			c.Tools = *o.Tools
		}
		if o.Images != nil {
			c.Images = *o.Images
		}
		if o.Thinking != nil {
			c.Thinking = *o.Thinking
		}
		if o.ContextWindow > 0 {
			c.ContextWindow = o.ContextWindow
		}
	}
	return c
}
