// Package protocol owns agentd's wire types: method names, the ACP-shaped params and results of
// the agent/* methods under their agent/ prefix, the session update notification and its kinds,
// and the agentd extensions (agent/x/*, _meta["agentd/..."]). It is a leaf: it imports nothing of
// agentd, so clients of the wire (the server, the engine, the editor bridge, the fake editor)
// share one vocabulary. JSON field names follow ACP v1: camelCase keys, snake_case values.
package protocol

import "encoding/json"

// ProtocolVersion is the latest agent protocol version agentd speaks.
const ProtocolVersion = 1

// Client → agentd requests and notifications.
const (
	MethodSessionNew             = "agent/session/new"
	MethodSessionLoad            = "agent/session/load"
	MethodSessionResume          = "agent/session/resume"
	MethodSessionList            = "agent/session/list"
	MethodSessionClose           = "agent/session/close"
	MethodSessionDelete          = "agent/session/delete"
	MethodSessionPrompt          = "agent/session/prompt"
	MethodSessionSetConfigOption = "agent/session/set_config_option"
	MethodSessionFork            = "agent/session/fork"
	MethodCheckpointsList        = "agent/x/checkpoints/list"
	MethodProgramsList           = "agent/x/programs/list"
	MethodProgramStop            = "agent/x/programs/stop"
	MethodCheckpointsRestore     = "agent/x/checkpoints/restore"
	MethodSessionCancel          = "agent/session/cancel" // notification
	MethodProvidersList          = "agent/providers/list"
	MethodProvidersSet           = "agent/providers/set"
	MethodProvidersTest          = "agent/providers/test"
)

// agentd → client.
const (
	MethodSessionUpdate     = "agent/session/update" // notification
	MethodRequestPermission = "agent/session/request_permission"
	MethodReadTextFile      = "agent/fs/read_text_file"
	MethodDirtyBuffers      = "agent/x/dirty_buffers"
	MethodDiagnostics       = "agent/x/diagnostics"
	MethodSecretsGet        = "agent/x/secrets/get"
	MethodWorkspaceSymbols  = "agent/x/workspace_symbols"
	MethodSaveBuffers       = "agent/x/save_buffers"
	MethodEditorState       = "agent/x/editor_state"
	MethodApplyEdit         = "workspace/applyEdit"
)

// JSON-RPC error codes the contract uses.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeServerNotInit    = -32002 // LSP ServerNotInitialized; also "unknown session" and "no such file" per the contract
	CodeRequestCancelled = -32800
	CodeRequestFailed    = -32803 // LSP RequestFailed: valid params the state refuses (a restore while a turn runs)
)

// Meta is the _meta object allowed everywhere.
type Meta map[string]any

// ---- initialize ----

// AgentInitOptions is initializationOptions.agent.
type AgentInitOptions struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientInfo         *ClientInfo        `json:"clientInfo,omitempty"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	Settings           json.RawMessage    `json:"settings,omitempty"`
}

type ClientInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

type ClientCapabilities struct {
	FS               FSCapabilities         `json:"fs"`
	DirtyBuffers     bool                   `json:"dirtyBuffers,omitempty"`
	Diagnostics      bool                   `json:"diagnostics,omitempty"`
	Permissions      PermissionCapabilities `json:"permissions"`
	Secrets          bool                   `json:"secrets,omitempty"`
	SaveBuffers      bool                   `json:"saveBuffers,omitempty"`
	WorkspaceSymbols bool                   `json:"workspaceSymbols,omitempty"`
	// EditorState says the client answers agent/x/editor_state.
	EditorState bool `json:"editorState,omitempty"`
	// Notices says the client shows notice updates to the user; a client that does not say so
	// gets each notice as window/showMessage too, which every LSP client shows.
	Notices bool `json:"notices,omitempty"`
	// Elicitation says which modes of agent/elicitation/create the client shows.
	Elicitation *ElicitationCapabilities `json:"elicitation,omitempty"`
}

type FSCapabilities struct {
	ReadTextFile bool `json:"readTextFile,omitempty"`
}

type PermissionCapabilities struct {
	UI bool `json:"ui,omitempty"`
}

// AgentServerCapabilities is capabilities.experimental.agent of the InitializeResult.
type AgentServerCapabilities struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	Providers         []ProviderInfo    `json:"providers"`
}

type AgentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities     `json:"mcpCapabilities"`
}

type SessionCapabilities struct {
	List   *struct{} `json:"list,omitempty"`
	Resume *struct{} `json:"resume,omitempty"`
	Close  *struct{} `json:"close,omitempty"`
	Delete *struct{} `json:"delete,omitempty"`
}

type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// KeyStatus values.
const (
	KeySet       = "set"
	KeyMissing   = "missing"
	KeyNotNeeded = "not_needed"
)

type ProviderInfo struct {
	ProviderID string   `json:"providerId"`
	APIType    string   `json:"apiType"`
	BaseURL    string   `json:"baseUrl"`
	Model      string   `json:"model,omitempty"`
	Models     []string `json:"models,omitempty"`
	KeyStatus  string   `json:"keyStatus"`
}

// ---- content ----

// ContentBlock is an ACP content block: text, image, resource_link or resource.
type ContentBlock struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	MimeType string            `json:"mimeType,omitempty"`
	Data     string            `json:"data,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
	Resource *EmbeddedResource `json:"resource,omitempty"`
	Meta     Meta              `json:"_meta,omitempty"`
}

type EmbeddedResource struct {
	URI      string `json:"uri"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// TextBlock is a text content block.
func TextBlock(s string) ContentBlock { return ContentBlock{Type: "text", Text: s} }

// ---- sessions ----

type SessionNewParams struct {
	Cwd                   string            `json:"cwd"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	MCPServers            []json.RawMessage `json:"mcpServers,omitempty"`
	Meta                  Meta              `json:"_meta,omitempty"`
}

type SessionNewResult struct {
	SessionID     string         `json:"sessionId"`
	ConfigOptions []ConfigOption `json:"configOptions"`
	Modes         *SessionModes  `json:"modes,omitempty"`
	// Meta carries _meta["agentd/instructions"]: the instruction files the session loaded.
	Meta map[string]any `json:"_meta,omitempty"`
}

type SessionLoadParams struct {
	SessionID  string            `json:"sessionId"`
	Cwd        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers,omitempty"`
}

// SessionForkParams name the session to copy; Cwd defaults to its cwd (ACP's unstable
// session/fork).
type SessionForkParams struct {
	SessionID  string            `json:"sessionId"`
	Cwd        string            `json:"cwd,omitempty"`
	MCPServers []json.RawMessage `json:"mcpServers,omitempty"`
}

type SessionForkResult struct {
	SessionID     string         `json:"sessionId"`
	ConfigOptions []ConfigOption `json:"configOptions,omitempty"`
	Modes         *SessionModes  `json:"modes,omitempty"`
}

type SessionLoadResult struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
	Modes         *SessionModes  `json:"modes,omitempty"`
}

type SessionListParams struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

type SessionListResult struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

type SessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"` // RFC 3339
}

type SessionIDParams struct {
	SessionID string `json:"sessionId"`
}

type PromptParams struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
}

// Stop reasons of a prompt turn.
const (
	StopEndTurn         = "end_turn"
	StopMaxTokens       = "max_tokens"
	StopMaxTurnRequests = "max_turn_requests"
	StopRefusal         = "refusal"
	StopCancelled       = "cancelled"
)

type PromptResult struct {
	StopReason string `json:"stopReason"`
	Usage      *Usage `json:"usage,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// MetaChanges is the prompt answer's _meta key listing the files the turn changed.
const MetaChanges = "agentd/changes"

// FileChange is one file a turn changed: created, modified, deleted or renamed (From is where
// it was), with the lines it added and removed.
type FileChange struct {
	Path    string `json:"path"`
	Change  string `json:"change"`
	From    string `json:"from,omitempty"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// ProgramsListResult answers agent/x/programs/list: the session's background programs, oldest
// first, running or ended.
type ProgramsListResult struct {
	Programs []Program `json:"programs"`
}

// Program is one background program (run_program {background: true}).
type Program struct {
	ProgramID string   `json:"programId"`
	Command   []string `json:"command"`
	Cwd       string   `json:"cwd"`
	// State is "running", "exited" or "stopped"; ExitCode is set once it is not running.
	State    string `json:"state"`
	ExitCode *int   `json:"exitCode,omitempty"`
	// Sandboxed says it runs in the OS sandbox.
	Sandboxed bool `json:"sandboxed"`
	// ToolCallID is the run_program call that started it.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// ProgramStopParams is agent/x/programs/stop: the user ends a background program.
type ProgramStopParams struct {
	SessionID string `json:"sessionId"`
	ProgramID string `json:"programId"`
}

// CheckpointListResult answers agent/x/checkpoints/list, newest first.
type CheckpointListResult struct {
	Checkpoints []Checkpoint `json:"checkpoints"`
}

// Checkpoint is what one turn's file changes replaced, listed by file.
type Checkpoint struct {
	CheckpointID string           `json:"checkpointId"`
	CreatedAt    string           `json:"createdAt"`
	Prompt       string           `json:"prompt"`
	Files        []CheckpointFile `json:"files"`
}

type CheckpointFile struct {
	Path   string `json:"path"`
	Change string `json:"change"`
	From   string `json:"from,omitempty"`
}

// What agent/x/checkpoints/restore puts back.
const (
	RestoreFiles        = "files"
	RestoreConversation = "conversation"
	RestoreBoth         = "both"
)

// CheckpointRestoreParams name the checkpoint to go back to: the state before its turn.
type CheckpointRestoreParams struct {
	SessionID    string `json:"sessionId"`
	CheckpointID string `json:"checkpointId"`
	Restore      string `json:"restore"`
}

// CheckpointRestoreResult lists each file the restore looked at; Reason says why one was not
// restored. Files is empty (never null) for a conversation-only restore.
type CheckpointRestoreResult struct {
	Files []RestoredFile `json:"files"`
}

type RestoredFile struct {
	Path     string `json:"path"`
	Restored bool   `json:"restored"`
	Reason   string `json:"reason,omitempty"`
}

// Usage of a whole turn.
type Usage struct {
	InputTokens       int `json:"inputTokens"`
	OutputTokens      int `json:"outputTokens"`
	CachedReadTokens  int `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens int `json:"cachedWriteTokens,omitempty"`
	ThoughtTokens     int `json:"thoughtTokens,omitempty"`
	TotalTokens       int `json:"totalTokens"`
}

// ErrorMeta is _meta["agentd/error"] of a turn that failed on a provider error.
type ErrorMeta struct {
	Kind         string `json:"kind"`
	Message      string `json:"message"`
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
}

type SetConfigOptionParams struct {
	SessionID string `json:"sessionId"`
	ConfigID  string `json:"configId"`
	// Type is ConfigBoolean for a boolean option's value ("true" or "false"; the ACP door
	// decodes ACP's JSON boolean into it), else empty: a select's value id.
	Type  string `json:"type,omitempty"`
	Value string `json:"value"`
}

type SetConfigOptionResult struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// ConfigOption is an ACP session config option: a select (Type "select", CurrentValue one of
// Options' values) or a boolean (Type ConfigBoolean, CurrentValue "true" or "false", written as
// the JSON boolean, no Options), which agentd offers only to a client that takes booleans.
type ConfigOption struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Description  string              `json:"description,omitempty"`
	Category     string              `json:"category,omitempty"` // mode | model | thought_level | model_config
	Type         string              `json:"type"`               // "select" | "boolean"
	CurrentValue string              `json:"currentValue"`
	Options      []ConfigOptionValue `json:"options"`
	// Meta on the model option carries MetaPromptCapabilities for the current model.
	Meta Meta `json:"_meta,omitempty"`
}

// MetaPromptCapabilities is the model option's _meta key holding the promptCapabilities of the
// session's current model ({image, audio, embeddedContext}): what initialize says for the
// default model, said again for the model the session uses.
const MetaPromptCapabilities = "agentd/promptCapabilities"

type ConfigOptionValue struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

type SessionModes struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ---- providers ----

type ProvidersListResult struct {
	Providers []ProviderInfo `json:"providers"`
}

type ProvidersSetParams struct {
	ProviderID string            `json:"providerId"`
	APIType    string            `json:"apiType"`
	BaseURL    string            `json:"baseUrl,omitempty"`
	Model      string            `json:"model,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
}

type ProvidersTestParams struct {
	ProviderID string `json:"providerId"`
}

type ProvidersTestResult struct {
	OK bool `json:"ok"`
	// Models are the chat models; EmbeddingModels the ones for providers.<id>.embeddingModel.
	Models          []string `json:"models"`
	EmbeddingModels []string `json:"embeddingModels"`
	Message         string   `json:"message"`
}

// ConfigBoolean is the Type of a boolean ConfigOption.
const ConfigBoolean = "boolean"

// MarshalJSON writes a boolean option's currentValue as a JSON boolean, without options, as
// ACP's SessionConfigBoolean is; a select as it is.
// (update_append.go writes the same bytes without reflection.)
func (o ConfigOption) MarshalJSON() ([]byte, error) {
	type plain ConfigOption
	if o.Type != ConfigBoolean {
		return json.Marshal(plain(o))
	}
	return json.Marshal(struct {
		ID           string `json:"id"`
		Name         string `json:"name"`
		Description  string `json:"description,omitempty"`
		Category     string `json:"category,omitempty"`
		Type         string `json:"type"`
		CurrentValue bool   `json:"currentValue"`
		Meta         Meta   `json:"_meta,omitempty"`
	}{o.ID, o.Name, o.Description, o.Category, o.Type, o.CurrentValue == "true", o.Meta})
}
