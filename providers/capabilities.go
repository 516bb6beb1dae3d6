package providers

import (
	"sort"
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

// family is one row of the table: models whose normalized name starts with prefix.
type family struct {
	prefix string
	caps   Capabilities
}

func caps(tools, images, thinking bool, window int) Capabilities {
	return Capabilities{Tools: tools, Images: images, Thinking: thinking, ContextWindow: window}
}

// families are the known model families, from the vendors' model pages (and, for open-weight
// models, what Ollama's library marks as tools / vision / thinking). Names are matched after
// normalize, by the longest prefix, so a specific row ("gpt4o") wins over its family ("gpt4").
var families = sortedFamilies([]family{
	// Anthropic: every Claude model takes tools and images; extended thinking from 3.7 on.
	{"claude", caps(true, true, true, 200000)},
	{"claude3", caps(true, true, false, 200000)},
	{"claude35", caps(true, true, false, 200000)},
	{"claude37", caps(true, true, true, 200000)},
	{"claudeinstant", caps(false, false, false, 100000)},
	{"claude2", caps(false, false, false, 200000)},
	// OpenAI.
	{"gpt35", caps(true, false, false, 16385)},
	{"gpt4", caps(true, false, false, 8192)},
	{"gpt4turbo", caps(true, true, false, 128000)},
	{"gpt4o", caps(true, true, false, 128000)},
	{"gpt41", caps(true, true, false, 1047576)},
	{"gpt5", caps(true, true, true, 400000)},
	{"gpt5chat", caps(true, true, false, 128000)},
	{"gptoss", caps(true, false, true, 131072)},
	{"o1", caps(true, true, true, 200000)},
	{"o1mini", caps(false, false, true, 128000)},
	{"o1preview", caps(false, false, true, 128000)},
	{"o3", caps(true, true, true, 200000)},
	{"o3mini", caps(true, false, true, 200000)},
	{"o4mini", caps(true, true, true, 200000)},
	// Google.
	{"gemini", caps(true, true, false, 1048576)},
	{"gemini15pro", caps(true, true, false, 2097152)},
	{"gemini25", caps(true, true, true, 1048576)},
	{"gemini3", caps(true, true, true, 1048576)},
	{"gemma", caps(false, false, false, 8192)},
	{"gemma3", caps(false, true, false, 131072)},
	// Alibaba's Qwen.
	{"qwen", caps(true, false, false, 32768)},
	{"qwen2", caps(true, false, false, 32768)},
	{"qwen25", caps(true, false, false, 32768)},
	{"qwen25coder", caps(true, false, false, 32768)},
	{"qwen25vl", caps(true, true, false, 128000)},
	{"qwen2vl", caps(false, true, false, 32768)},
	{"qwenvl", caps(false, true, false, 32768)},
	{"qwen3", caps(true, false, true, 40960)},
	{"qwen3coder", caps(true, false, false, 262144)},
	{"qwen3vl", caps(true, true, true, 262144)},
	{"qwq", caps(true, false, true, 40960)},
	// Meta's Llama: 3.0 has no tool calling; 3.1 and later do, with 128K windows.
	{"llama2", caps(false, false, false, 4096)},
	{"llama3", caps(false, false, false, 8192)},
	{"llama31", caps(true, false, false, 131072)},
	{"llama32", caps(true, false, false, 131072)},
	{"llama32vision", caps(false, true, false, 131072)},
	{"llama33", caps(true, false, false, 131072)},
	{"llama4", caps(true, true, false, 1048576)},
	{"codellama", caps(false, false, false, 16384)},
	// DeepSeek: the coder models have no tool calling; R1 reasons without tools.
	{"deepseekcoder", caps(false, false, false, 16384)},
	{"deepseekcoderv2", caps(false, false, false, 163840)},
	{"deepseekchat", caps(true, false, false, 131072)},
	{"deepseekv3", caps(true, false, false, 131072)},
	{"deepseekreasoner", caps(true, false, true, 131072)},
	{"deepseekr1", caps(false, false, true, 131072)},
	// Mistral.
	{"mistral", caps(true, false, false, 32768)},
	{"mistrallarge", caps(true, false, false, 131072)},
	{"mistralsmall", caps(true, true, false, 131072)},
	{"mistralnemo", caps(true, false, false, 131072)},
	{"mixtral", caps(true, false, false, 32768)},
	{"codestral", caps(true, false, false, 262144)},
	{"devstral", caps(true, false, false, 131072)},
	{"pixtral", caps(true, true, false, 131072)},
	{"magistral", caps(true, false, true, 40960)},
	// Others commonly run locally.
	{"phi3", caps(false, false, false, 131072)},
	{"phi4", caps(false, false, false, 16384)},
	{"phi4mini", caps(true, false, false, 131072)},
	{"starcoder", caps(false, false, false, 16384)},
	{"granite3", caps(true, false, false, 131072)},
	{"llava", caps(false, true, false, 4096)},
	{"bakllava", caps(false, true, false, 4096)},
	{"moondream", caps(false, true, false, 2048)},
})

func sortedFamilies(fs []family) []family {
	sort.Slice(fs, func(i, j int) bool { return len(fs[i].prefix) > len(fs[j].prefix) })
	return fs
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
	for _, f := range families {
		if strings.HasPrefix(n, f.prefix) {
			return f.caps, true
		}
	}
	return unknownModel, false
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
