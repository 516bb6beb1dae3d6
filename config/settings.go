// Package config owns agentd's settings: their one JSON shape, the layers they are read from
// (defaults ← user file ← project file ← initializationOptions ← didChangeConfiguration ←
// agent/providers/set ← flags, later wins), and one table (table.go) that gives every key its
// trust class, default and validation. Every layer is validated strictly (an unknown key fails
// with its path and the nearest known key), and the project file, which a cloned repository
// controls, may only describe the project or tighten: what else it sets is ignored and named in
// a notice, unless the user listed the project in trustedProjects.
package config

import (
	"encoding/json"
	"reflect"
	"sort"
	"time"
)

// Settings is the merged configuration. JSON keys follow docs/protocol.md.
type Settings struct {
	// Provider is the default providerId.
	Provider  string                      `json:"provider"`
	Providers map[string]ProviderSettings `json:"providers"`
	// Mode is the default permission mode: ask | auto | plan.
	Mode          string   `json:"mode"`
	MaxIterations int      `json:"maxIterations"`
	MaxTokens     int      `json:"maxTokens"`
	Thinking      Thinking `json:"thinking"`
	// SaveBeforeRun says which buffers agentd edited are saved before an exec tool runs.
	SaveBeforeRun SaveBeforeRun `json:"saveBeforeRun"`
	// AllowShell lets run_program take a shell string instead of argv.
	AllowShell bool `json:"allowShell"`
	// CompactThreshold is the fraction of the context window past which older turns are
	// summarized automatically.
	CompactThreshold float64 `json:"compactThreshold"`
	// EditorTimeoutSeconds bounds every request agentd sends the editor (a read, an edit, a save)
	// except a permission question: the tool call that made it fails when the editor does not
	// answer in time, the turn goes on.
	EditorTimeoutSeconds int `json:"editorTimeoutSeconds"`
	// AnswerReview sends an answer that holds code to the model once more, with the evidence the
	// turn's tools gathered, to check it before the turn ends (session/answer_review.go). Off by
	// default: it is a second request; only the user's layers may turn it on.
	AnswerReview bool `json:"answerReview"`
	// Trace is a file that receives a JSONL agent trace of every run; empty for none.
	Trace      string            `json:"trace,omitempty"`
	MCPServers []json.RawMessage `json:"mcpServers,omitempty"`
	// Web turns on the tools that reach the internet (web_fetch, web_search). Only the user's
	// layers may turn it on; a project may turn it off.
	Web Web `json:"web"`
	// WebSearch says which provider answers web_search.
	WebSearch WebSearch `json:"webSearch"`
	// Completion configures inline completions (textDocument/inlineCompletion): which of the
	// user's providers and models fill in the middle, through which endpoint. Only the user's
	// layers may set it: it decides where the text around the cursor goes as it is typed.
	Completion Completion `json:"completion"`
	// Models holds what the user says about a model, by the model id the provider sends
	// (providers.*.model): its price. One key is not a model id but a role: "fast" names the
	// provider and model that answer the side requests (titles, compaction summaries, answer
	// review) instead of the turn's model (see Fast).
	Models map[string]ModelSettings `json:"models,omitempty"`
	// Transcription configures agent/x/transcribe: which of the user's providers turns speech
	// into text (an OpenAI-compatible /audio/transcriptions) with which model. Only the user's
	// layers may set it: it decides where the user's voice is sent.
	Transcription Transcription `json:"transcription"`
	// TrustedProjects are project roots (absolute paths) whose .agentd/config.json is trusted
	// like the user's own settings. Only the user's layers may set it.
	TrustedProjects []string `json:"trustedProjects,omitempty"`
	// Hooks are programs agentd runs at points of a turn (session/hooks.go). They run code, so
	// only the user's layers (or a trusted project) may set them.
	Hooks Hooks `json:"hooks"`
	// Sandbox confines run_program's programs (config/sandbox.go).
	Sandbox Sandbox `json:"sandbox"`
	// Subagents bounds the agent tool's child conversations (session/subagents.go).
	Subagents Subagents `json:"subagents"`

	// ProjectNotice, when not empty, says which keys of the project file were ignored and how
	// to allow them; sessions show it as a notice. Not a setting.
	ProjectNotice string `json:"-"`
	// ProjectMCPServers are the mcpServers of a project file the user does not trust, kept
	// apart from MCPServers (the user's own): such a server starts only after the user approves
	// it for the project. Not a setting.
	ProjectMCPServers []json.RawMessage `json:"-"`
}

// ProviderSettings configures one provider. Keys are never part of it: they come from the
// environment variable APIKeyEnv names (else the variable of the dialect or preset whose own
// origin the base URL is), agentd's own secret store or the client's, looked up by origin
// (providers/keys). An empty BaseURL means the preset's (by provider id) or the dialect's.
type ProviderSettings struct {
	APIType   string `json:"apiType"`
	BaseURL   string `json:"baseUrl,omitempty"`
	Model     string `json:"model,omitempty"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// ContextWindow is the model's context size in tokens, for usage_update and compaction;
	// 0 means the dialect's default.
	ContextWindow int `json:"contextWindow,omitempty"`
	// EmbeddingModel is the model the provider embeds text with (its /v1/embeddings or
	// batchEmbedContents); set on a provider, it turns on semantic_search.
	EmbeddingModel string `json:"embeddingModel,omitempty"`
	// FirstByteTimeout is how many seconds a request waits for the server to start answering
	// (a local model loading its weights can take minutes); 0 means the transport's default.
	FirstByteTimeout float64 `json:"firstByteTimeout,omitempty"`
	// ToolCalling is how the model calls tools: ToolCallingNative (the API's tools), ToolCallingText
	// (the text protocol: <tool_call> envelopes in the model's text) or ToolCallingNone. Empty
	// means native unless the model's capabilities say it has no tools or its server refused
	// them, and then text.
	ToolCalling string `json:"toolCalling,omitempty"`
	// OutputSchema is how the server takes a JSON Schema that constrains the model's reply under
	// the text tool-call protocol: "json_schema" (llama-server), "response_format" (OpenAI's
	// structured outputs, as Ollama's /v1 takes them), "off"; empty means the known server's
	// own (Ollama and llama-server at their default addresses), else none.
	OutputSchema string `json:"outputSchema,omitempty"`
	// Capabilities overrides what the built-in table of model families says the provider's
	// model can do; a field left out keeps the table's value.
	Capabilities *Capabilities `json:"capabilities,omitempty"`
}

// ModelSettings is one entry of the settings' models object.
type ModelSettings struct {
	// Price replaces the built-in price of the model (providers.PriceOf), for usage_update's
	// cost.
	Price *Price `json:"price,omitempty"`
	// Provider and Model are read for the "fast" entry only (FastModel).
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// FastModelKey is the models entry that names the model of side requests.
const FastModelKey = "fast"

// Fast is models.fast.
func (s Settings) Fast() FastModel {
	m := s.Models[FastModelKey]
	return FastModel{Provider: m.Provider, Model: m.Model}
}

// Price is what a model costs per million tokens of each kind, in Currency (an ISO 4217 code;
// empty means USD). Input is the uncached prompt; CacheRead and CacheWrite are the prompt
// tokens read from and written to the provider's prompt cache, priced as Input when not given
// (nil; an explicit 0 is free); Output includes reasoning.
type Price struct {
	Input      float64  `json:"input"`
	Output     float64  `json:"output"`
	CacheRead  *float64 `json:"cacheRead,omitempty"`
	CacheWrite *float64 `json:"cacheWrite,omitempty"`
	Currency   string   `json:"currency,omitempty"`
}

// The values of ProviderSettings.ToolCalling.
const (
	ToolCallingNative = "native"
	ToolCallingText   = "text"
	ToolCallingNone   = "none"
)

// Capabilities is what a model can do, as the settings override it: native tool calling, reading
// images, visible reasoning, and its context window in tokens (0: the table's).
type Capabilities struct {
	Tools         *bool `json:"tools,omitempty"`
	Images        *bool `json:"images,omitempty"`
	Thinking      *bool `json:"thinking,omitempty"`
	ContextWindow int   `json:"contextWindow,omitempty"`
}

// FastModel is models.fast: Provider is a provider id (empty: the turn's provider), Model a
// model of it (empty: that provider's model). Both empty: side requests use the turn's model.
type FastModel struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// Hooks is the hooks setting: for each event, the hooks run in order.
type Hooks struct {
	BeforeTool   []Hook `json:"beforeTool,omitempty"`
	AfterTool    []Hook `json:"afterTool,omitempty"`
	PromptSubmit []Hook `json:"promptSubmit,omitempty"`
	Stop         []Hook `json:"stop,omitempty"`
	SessionStart []Hook `json:"sessionStart,omitempty"`
}

// Hook is one program run at an event: Match, when set, is a regular expression the tool's
// name must match (beforeTool, afterTool); Command is its argv (no shell); TimeoutMs bounds its
// run (0: 60 s).
type Hook struct {
	Match     string   `json:"match,omitempty"`
	Command   []string `json:"command"`
	TimeoutMs int      `json:"timeoutMs,omitempty"`
}

// Events lists the hooks of each event by the event's name.
func (h Hooks) Events() map[string][]Hook {
	return map[string][]Hook{"beforeTool": h.BeforeTool, "afterTool": h.AfterTool, "promptSubmit": h.PromptSubmit, "stop": h.Stop, "sessionStart": h.SessionStart}
}

// Subagents is the subagents setting: how many children of one session run at once, and what
// each may use: model steps (MaxIterations) and tokens, input and output together (MaxTokens).
type Subagents struct {
	MaxConcurrent int `json:"maxConcurrent"`
	MaxIterations int `json:"maxIterations"`
	MaxTokens     int `json:"maxTokens"`
}

// Trusts reports whether the user's trustedProjects lists the project root.
func (s Settings) Trusts(root string) bool { return trusts(s.TrustedProjects, root) }

// Web is the web setting.
type Web struct {
	Enabled bool `json:"enabled"`
}

// WebSearch is the webSearch setting: Provider is the id of a provider whose dialect can search
// (Gemini with Google Search grounding, Anthropic's web search tool, or an OpenAI-compatible
// search model); empty means no web_search.
type WebSearch struct {
	Provider string `json:"provider,omitempty"`
}

// Completion is the settings' completion object. Inline completions are on when Provider and
// Model are set.
type Completion struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Endpoint is the dialect of the request: "completions" (OpenAI-compatible /completions with
	// suffix), "infill" (llama.cpp's /infill), "fim" (Codestral's /fim/completions) or "chat"
	// (any chat model, prompted). Empty picks "chat" for anthropic and gemini providers and
	// "completions" otherwise.
	Endpoint  string `json:"endpoint,omitempty"`
	MaxTokens int    `json:"maxTokens,omitempty"`
	// ContextChars bounds the text sent around the cursor plus other open files (characters).
	ContextChars int `json:"contextChars,omitempty"`
}

// Transcription is the settings' transcription object; agent/x/transcribe is off until both
// are set.
type Transcription struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
}

// Enabled says whether inline completions are configured (provider and model named). A
// configured completion is served only when CompletionOn too.
func (c Completion) Enabled() bool { return c.Provider != "" && c.Model != "" }

// CompletionOn says whether inline completions are configured and their settings pass their
// checks; a bad completion setting turns them off (SoftProblem says why), not the daemon.
func (s Settings) CompletionOn() bool {
	return s.Completion.Enabled() && SoftProblem(s, "completion.") == nil
}

// FirstByteWait is FirstByteTimeout as a duration (0 for the transport's default).
func (p ProviderSettings) FirstByteWait() time.Duration {
	return time.Duration(p.FirstByteTimeout * float64(time.Second))
}

// Thinking configures visible reasoning. BudgetTokens nil means the provider's default.
type Thinking struct {
	Enabled      bool `json:"enabled"`
	BudgetTokens *int `json:"budgetTokens"`
}

// SaveBeforeRun is the saveBeforeRun setting: which of the buffers agentd edited the editor
// saves before a program runs (programs read the disk). In JSON it is "agentEdits", "all", or
// false for SaveNone; true reads as SaveAgentEdits.
type SaveBeforeRun string

const (
	// SaveNone saves nothing.
	SaveNone SaveBeforeRun = ""
	// SaveAgentEdits saves the files whose unsaved changes are all agentd's; one that also
	// holds the user's own unsaved changes is left unsaved (and the model told so).
	SaveAgentEdits SaveBeforeRun = "agentEdits"
	// SaveAll saves every file agentd edited, the user's own changes in it included.
	SaveAll SaveBeforeRun = "all"
)

// UnmarshalJSON reads a boolean or a string; the table's check says which strings are known.
func (s *SaveBeforeRun) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*s = SaveNone
		if v {
			*s = SaveAgentEdits
		}
	case string:
		*s = SaveBeforeRun(v)
	default:
		return &json.UnmarshalTypeError{Value: string(b), Type: reflect.TypeFor[string]()}
	}
	return nil
}

// MarshalJSON writes SaveNone as false.
func (s SaveBeforeRun) MarshalJSON() ([]byte, error) {
	if s == SaveNone {
		return []byte("false"), nil
	}
	return json.Marshal(string(s))
}

// EmbeddingProvider is the provider semantic_search embeds with: the default provider when it
// names an embeddingModel, else the first provider (by id) that does.
func (s Settings) EmbeddingProvider() (id string, ok bool) {
	if p, found := s.Providers[s.Provider]; found && p.EmbeddingModel != "" {
		return s.Provider, true
	}
	ids := make([]string, 0, len(s.Providers))
	for id, p := range s.Providers {
		if p.EmbeddingModel != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", false
	}
	sort.Strings(ids)
	return ids[0], true
}
