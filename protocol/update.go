package protocol

import "encoding/json"

// Session update kinds (the sessionUpdate discriminator).
const (
	UpdateUserMessageChunk        = "user_message_chunk"
	UpdateAgentMessageChunk       = "agent_message_chunk"
	UpdateAgentThoughtChunk       = "agent_thought_chunk"
	UpdateToolCall                = "tool_call"
	UpdateToolCallUpdate          = "tool_call_update"
	UpdatePlan                    = "plan"
	UpdateAvailableCommandsUpdate = "available_commands_update"
	UpdateCurrentModeUpdate       = "current_mode_update"
	UpdateConfigOptionUpdate      = "config_option_update"
	UpdateSessionInfoUpdate       = "session_info_update"
	UpdateUsageUpdate             = "usage_update"
	UpdateCompactionUpdate        = "compaction_update"
	UpdateNotice                  = "notice"
)

// Tool call statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// Tool kinds.
const (
	KindRead       = "read"
	KindEdit       = "edit"
	KindDelete     = "delete"
	KindMove       = "move"
	KindSearch     = "search"
	KindExecute    = "execute"
	KindThink      = "think"
	KindFetch      = "fetch"
	KindSwitchMode = "switch_mode"
	KindOther      = "other"
)

// SessionNotification is the params of agent/session/update.
type SessionNotification struct {
	SessionID string        `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
}

// StoredSessionNotification is the params of an agent/session/update whose update is JSON
// already: one a transcript stored, which session/load replays as it was written instead of
// decoding it and encoding it again. The bytes come from a file on disk, which may have been
// planted: the connection writes Update into the frame only once it has checked that it is one
// valid JSON object (jsonrpc's Stream.WriteStoredUpdate), so it cannot add members to the message
// around it.
type StoredSessionNotification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// SessionUpdate is the union of all update kinds, flattened: SessionUpdate names the kind and
// only that kind's fields are set. Fields whose JSON shape differs between kinds (content) are
// split: Content is the single block of message and thought chunks, ToolContent the list of a
// tool call. MarshalJSON writes the one "content" key the kind has.
type SessionUpdate struct {
	SessionUpdate string `json:"sessionUpdate"`

	// user_message_chunk, agent_message_chunk, agent_thought_chunk
	MessageID string        `json:"messageId,omitempty"`
	Content   *ContentBlock `json:"-"`

	// tool_call, tool_call_update
	ToolCallID  string            `json:"toolCallId,omitempty"`
	Title       string            `json:"title,omitempty"`
	Kind        string            `json:"kind,omitempty"`
	Status      string            `json:"status,omitempty"`
	ToolContent []ToolCallContent `json:"-"`
	Locations   []ToolLocation    `json:"locations,omitempty"`
	RawInput    json.RawMessage   `json:"rawInput,omitempty"`
	RawOutput   json.RawMessage   `json:"rawOutput,omitempty"`

	// plan
	Entries []PlanEntry `json:"entries,omitempty"`

	// available_commands_update
	AvailableCommands []AvailableCommand `json:"availableCommands,omitempty"`

	// current_mode_update, config_option_update
	CurrentModeID string         `json:"currentModeId,omitempty"`
	ConfigOptions []ConfigOption `json:"configOptions,omitempty"`

	// session_info_update
	SessionTitle string `json:"-"` // written as "title" for session_info_update
	UpdatedAt    string `json:"updatedAt,omitempty"`

	// usage_update
	Used *int `json:"used,omitempty"`
	Size *int `json:"size,omitempty"`
	// Cost is the session's cumulative cost; nil when the price of the model is not known
	// (never a made-up 0).
	Cost *Cost `json:"cost,omitempty"`

	// compaction_update
	CompactionID string `json:"compactionId,omitempty"`
	Summary      string `json:"summary,omitempty"`
	// Status above is reused by compaction_update.

	// notice
	Severity    string `json:"severity,omitempty"`
	NoticeTitle string `json:"-"` // written as "title" for notice
	Description string `json:"description,omitempty"`

	Meta Meta `json:"_meta,omitempty"`
}

// Cost is ACP v1's Cost: Amount in Currency (an ISO 4217 code, "USD" unless the user's price
// table says otherwise), cumulative for the session.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// ToolCallContent is one item of a tool call's content: a diff, output content, or a terminal.
type ToolCallContent struct {
	Type    string        `json:"type"` // diff | content
	Path    string        `json:"path,omitempty"`
	OldText *string       `json:"oldText"`
	NewText *string       `json:"newText,omitempty"`
	Content *ContentBlock `json:"content,omitempty"`
}

type ToolLocation struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"` // high | medium | low
	Status   string `json:"status"`   // pending | in_progress | completed
}

type AvailableCommand struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Input       *struct {
		Hint string `json:"hint"`
	} `json:"input,omitempty"`
}

// Notice severities.
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// ---- agentd → client requests ----

// RequestPermissionParams is agent/session/request_permission.
type RequestPermissionParams struct {
	SessionID string             `json:"sessionId"`
	ToolCall  SessionUpdate      `json:"toolCall"` // a tool_call_update-shaped object
	Options   []PermissionOption `json:"options"`
}

type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // allow_once | allow_always | reject_once | reject_always
	Meta     Meta   `json:"_meta,omitempty"`
}

// Permission option ids agentd offers.
const (
	OptionAllowOnce    = "allow_once"
	OptionAllowSession = "allow_session"
	OptionAllowAlways  = "allow_always"
	OptionRejectOnce   = "reject_once"
	OptionRejectAlways = "reject_always"
	OptionSwitchAsk    = "switch_mode_ask"
	OptionSwitchAuto   = "switch_mode_auto"
)

type RequestPermissionResult struct {
	Outcome PermissionOutcome `json:"outcome"`
}

type PermissionOutcome struct {
	Outcome  string `json:"outcome"` // selected | cancelled
	OptionID string `json:"optionId,omitempty"`
	// Meta may carry "agentd/instruction" (string) on reject_once: what the user wants instead,
	// handed to the model verbatim.
	Meta Meta `json:"_meta,omitempty"`
}

// MetaInstruction is the _meta key of a denial's instruction (PermissionOutcome.Meta).
const MetaInstruction = "agentd/instruction"

// MetaMCPServer names the MCP server of a contributed tool, on its tool_call (and the transcript's
// record of it) and on the permission request's toolCall, so a client can show where it runs.
const MetaMCPServer = "agentd/mcpServer"

// MetaParentToolCall is on every update of a subagent's child conversation (its tool calls, their
// permission requests, its notices): the toolCallId of the agent call it runs under, which the
// clients nest the child's calls beneath.
const MetaParentToolCall = "agentd/parentToolCallId"

type ReadTextFileParams struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      *int   `json:"line,omitempty"`
	Limit     *int   `json:"limit,omitempty"`
}

type ReadTextFileResult struct {
	Content string `json:"content"`
	Meta    Meta   `json:"_meta,omitempty"` // "agentd/version" (number), "agentd/dirty" (bool)
}

type DirtyBuffersParams struct {
	SessionID string `json:"sessionId"`
}

type DirtyBuffersResult struct {
	Buffers []DirtyBuffer `json:"buffers"`
}

type DirtyBuffer struct {
	Path    string `json:"path"`
	Version *int32 `json:"version"`
}

type EditorStateParams struct {
	SessionID string `json:"sessionId"`
}

// EditorStateResult answers agent/x/editor_state: what the user is looking at. Paths are
// absolute, lines 1-based. agentd reads each field on its own, so a malformed one loses only
// itself.
type EditorStateResult struct {
	ActiveFile string           `json:"activeFile,omitempty"`
	Selection  *EditorSelection `json:"selection,omitempty"`
	OpenFiles  []string         `json:"openFiles"`
}

type EditorSelection struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	EndLine   int    `json:"endLine"`
	Text      string `json:"text,omitempty"`
}

type DiagnosticsParams struct {
	SessionID string   `json:"sessionId"`
	Paths     []string `json:"paths,omitempty"`
}

type DiagnosticsResult struct {
	Items []FileDiagnostics `json:"items"`
}

// FileDiagnostics carries LSP Diagnostic objects as the editor sent them.
type FileDiagnostics struct {
	Path        string            `json:"path"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
}

type SecretsGetParams struct {
	Key string `json:"key"`
}

type SecretsGetResult struct {
	Value *string `json:"value,omitempty"`
}

type WorkspaceSymbolsParams struct {
	SessionID string `json:"sessionId"`
	Query     string `json:"query"`
}

type WorkspaceSymbolsResult struct {
	Symbols []json.RawMessage `json:"symbols"` // LSP WorkspaceSymbol / SymbolInformation
}

type SaveBuffersParams struct {
	SessionID string   `json:"sessionId"`
	Paths     []string `json:"paths"`
}

type SaveBuffersResult struct {
	Saved  []string     `json:"saved"`
	Failed []SaveFailed `json:"failed"`
}

type SaveFailed struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}
