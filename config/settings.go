// Package config owns agentd's settings: their one JSON shape, the built-in defaults, the layers
// they are read from (defaults ← user file ← project file ← initializationOptions ←
// didChangeConfiguration, later wins), validation that names the offending key, and the rule
// that API keys never come from a project file.
package config

import "encoding/json"

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
	// SaveBeforeRun asks the editor to save the session's edited buffers before an exec tool.
	SaveBeforeRun bool `json:"saveBeforeRun"`
	// AllowShell lets run_program take a shell string instead of argv.
	AllowShell bool `json:"allowShell"`
	// CompactThreshold is the fraction of the context window past which older turns are
	// summarized automatically.
	CompactThreshold float64 `json:"compactThreshold"`
	// Trace is a file that receives a JSONL agent trace of every run; empty for none.
	Trace      string            `json:"trace,omitempty"`
	MCPServers []json.RawMessage `json:"mcpServers,omitempty"`
}

// ProviderSettings configures one provider. Keys are never part of it: they come from the
// environment variable APIKeyEnv names (else the apiType's conventional one), the client's secret
// store, or agentd's own.
type ProviderSettings struct {
	APIType   string `json:"apiType"`
	BaseURL   string `json:"baseUrl,omitempty"`
	Model     string `json:"model,omitempty"`
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// ContextWindow is the model's context size in tokens, for usage_update and compaction;
	// 0 means the dialect's default.
	ContextWindow int `json:"contextWindow,omitempty"`
}

// Thinking configures visible reasoning. BudgetTokens nil means the provider's default.
type Thinking struct {
	Enabled      bool `json:"enabled"`
	BudgetTokens *int `json:"budgetTokens"`
}
