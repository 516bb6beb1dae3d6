package rpc

// The ACP door: `agentd acp` serves ACP v1 (agentclientprotocol.com) on the same server, method
// table and engine as the LSP door. It differs in three places only: the framing (one JSON
// message per line, see jsonrpc.Options.NDJSON), the method names (ACP has no `agent/` prefix and
// spells agentd's extensions `_agentd/…`; acpTranslate renames each message as it crosses the
// wire, so the table and the bridge keep the LSP door's names), and the lifecycle (ACP's own
// initialize and authenticate, no shutdown/exit: the end of input ends the process, exit code 0).
// Where a standard ACP client would not see what the LSP door's clients see, the door says it in
// ACP's terms: a failed turn is an error answer to session/prompt (acpPrompt), and a notice or a
// compaction goes in the form the client's capabilities allow (acpCodec).
// The session package never learns which door it serves.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/keys"
	"github.com/agentd-dev/agentd/session"
)

// ACPProtocolVersion is the ACP major version the ACP door speaks.
const ACPProtocolVersion = 1

// CodeAuthRequired is ACP's "authentication required" error.
const CodeAuthRequired = -32000

// acpIncoming renames a method an ACP client sends to the name in the method table; ok is false
// for a name that passes unchanged.
func acpIncoming(m string) (string, bool) {
	switch {
	case strings.HasPrefix(m, "session/"):
		return "agent/" + m, true
	case strings.HasPrefix(m, "_agentd/providers/"):
		return "agent/" + strings.TrimPrefix(m, "_agentd/"), true
	case strings.HasPrefix(m, "_agentd/"):
		return "agent/x/" + strings.TrimPrefix(m, "_agentd/"), true
	case m == "$/cancel_request":
		return "$/cancelRequest", true
	}
	return m, false
}

// acpOutgoing renames a method agentd sends to its ACP name; drop is true for a message ACP has
// no place for (window/showMessage: its text is logged instead).
func acpOutgoing(m string) (name string, ok, drop bool) {
	switch {
	case strings.HasPrefix(m, "agent/x/"):
		return "_agentd/" + strings.TrimPrefix(m, "agent/x/"), true, false
	case strings.HasPrefix(m, "agent/"):
		return strings.TrimPrefix(m, "agent/"), true, false
	case m == "$/cancelRequest":
		return "$/cancel_request", true, false
	case strings.HasPrefix(m, "window/"):
		return m, false, true
	}
	return m, false, false
}

var (
	lspUpdatePrefix = []byte(`{"jsonrpc":"2.0","method":"` + protocol.MethodSessionUpdate + `",`)
	acpUpdatePrefix = []byte(`{"jsonrpc":"2.0","method":"session/update",`)
	// extUpdatePrefix carries the update kinds ACP does not have (notice, compaction_update) as
	// an extension notification, which ACP clients that do not know it ignore, where an unknown
	// sessionUpdate fails their schema validation.
	extUpdatePrefix = []byte(`{"jsonrpc":"2.0","method":"_agentd/session/update",`)
	updateKindKey   = []byte(`"sessionUpdate":"`)
	// agentdKinds are the kinds that take the extension, each with its closing quote.
	agentdKinds = [][]byte{[]byte(protocol.UpdateNotice + `"`), []byte(protocol.UpdateCompactionUpdate + `"`)}
)

// acpOwnUpdate says whether an agent/session/update's params (the bytes after its method) hold a
// kind ACP v1 defines. The kind is near the front: only the first bytes are searched.
func acpOwnUpdate(rest []byte) bool {
	head := rest[:min(len(rest), 512)]
	i := bytes.Index(head, updateKindKey)
	if i < 0 {
		return true
	}
	kind := head[i+len(updateKindKey):]
	for _, k := range agentdKinds {
		if bytes.HasPrefix(kind, k) {
			return false
		}
	}
	return true
}

// acpTranslate is the ACP door's codec (jsonrpc.Options.Translate): it renames the methods of
// requests and notifications both ways and reshapes $/cancel_request's {requestId} into
// $/cancelRequest's {id}. Answers pass unchanged, as does anything that is not a JSON object
// (the decoder answers it). Session updates, the bulk of the traffic, take a byte-level path;
// every other message is scanned once without decoding (jsonrpc.Scan): an answer
// passes as it is, and a request or notification gets its method's value replaced in place of
// the old one, the rest of the body untouched. Only what the scan cannot place (a method with
// escapes, the cancel notifications whose params change) is decoded and encoded again.
func acpTranslate(incoming bool, body []byte) []byte {
	if !incoming && bytes.HasPrefix(body, lspUpdatePrefix) {
		rest := body[len(lspUpdatePrefix):]
		prefix := acpUpdatePrefix
		if !acpOwnUpdate(rest) {
			prefix = extUpdatePrefix
		}
		out := make([]byte, 0, len(prefix)+len(rest))
		out = append(out, prefix...)
		return append(out, rest...)
	}
	if out, ok := acpRename(incoming, body); ok {
		return out
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil {
		return body
	}
	var method string
	if raw, ok := env["method"]; !ok || json.Unmarshal(raw, &method) != nil {
		return body
	}
	var name string
	var ok bool
	if incoming {
		name, ok = acpIncoming(method)
	} else {
		var drop bool
		name, ok, drop = acpOutgoing(method)
		if drop {
			return nil
		}
	}
	if !ok {
		return body
	}
	env["method"], _ = json.Marshal(name)
	if params, has := env["params"]; has && (method == "$/cancel_request" || method == "$/cancelRequest") {
		from, to := "requestId", "id"
		if !incoming {
			from, to = "id", "requestId"
		}
		var p map[string]json.RawMessage
		if json.Unmarshal(params, &p) == nil {
			if v, has := p[from]; has {
				delete(p, from)
				p[to] = v
			}
			env["params"], _ = json.Marshal(p)
		}
	}
	out, err := json.Marshal(env)
	if err != nil {
		return body
	}
	return out
}

// acpCodec is the ACP door's codec with what the client said at initialize that changes how a
// message is written: a notice goes as ACP's own `notice` update to a client that advertised
// clientCapabilities.session.notices, and as an agent_message_chunk holding its text to every
// other client, which shows that and would drop an update it does not know (or the _agentd/
// extension): a fallback, a retry or settings left out must reach the user in any client.
type acpCodec struct {
	notices atomic.Bool
	// compaction: the client advertised session.compaction, so compaction_update goes as ACP's
	// own update (its summary as content blocks) instead of the _agentd/ extension.
	compaction atomic.Bool
	// booleans: the client advertised session.configOptions.boolean, so sessions offer their
	// boolean option (answer_review), which ACP forbids offering to any other client.
	booleans atomic.Bool
}

var (
	noticeKind     = []byte(protocol.UpdateNotice + `"`)
	compactionKind = []byte(protocol.UpdateCompactionUpdate + `"`)
)

func (c *acpCodec) translate(incoming bool, body []byte) []byte {
	if !incoming && bytes.HasPrefix(body, lspUpdatePrefix) && acpUpdateIs(body[len(lspUpdatePrefix):], noticeKind) {
		if c.notices.Load() {
			rest := body[len(lspUpdatePrefix):]
			return append(append(make([]byte, 0, len(acpUpdatePrefix)+len(rest)), acpUpdatePrefix...), rest...)
		}
		if out, ok := noticeAsMessage(body); ok {
			return out
		}
	}
	if !incoming && c.compaction.Load() && bytes.HasPrefix(body, lspUpdatePrefix) && acpUpdateIs(body[len(lspUpdatePrefix):], compactionKind) {
		if out, ok := acpCompaction(body); ok {
			return out
		}
	}
	return acpTranslate(incoming, body)
}

// acpUpdateIs says whether the params of an agent/session/update (the bytes after its method)
// hold an update of kind (written with its closing quote).
func acpUpdateIs(rest, kind []byte) bool {
	head := rest[:min(len(rest), 512)]
	i := bytes.Index(head, updateKindKey)
	return i >= 0 && bytes.HasPrefix(head[i+len(updateKindKey):], kind)
}

// noticeMessageID is the messageId of a notice noticeAsMessage writes: random, so that a
// notice of another agentd process in the same session never shares it.
func noticeMessageID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "notice_" + hex.EncodeToString(b[:])
}

// noticeAsMessage rewrites a notice update as the agent_message_chunk a client without
// session.notices shows: "Warning: TITLE", the description on the next line, set apart from
// the text around it by blank lines, as a message of its own. ok is false for a body it cannot read (passed on as it is).
func noticeAsMessage(body []byte) ([]byte, bool) {
	var msg struct {
		Params protocol.SessionNotification `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil, false
	}
	u := msg.Params.Update
	label := "Note"
	switch u.Severity {
	case protocol.SeverityWarning:
		label = "Warning"
	case protocol.SeverityError:
		label = "Error"
	}
	text := "\n\n" + label + ": " + u.NoticeTitle
	if u.Description != "" {
		text += "\n" + u.Description
	}
	text += "\n\n"
	n := protocol.SessionNotification{SessionID: msg.Params.SessionID, Update: protocol.SessionUpdate{
		SessionUpdate: protocol.UpdateAgentMessageChunk,
		// A message of its own (ACP: a new messageId starts a new message), not more text of
		// the reply it may interrupt.
		MessageID: noticeMessageID(),
		Content:   &protocol.ContentBlock{Type: "text", Text: text},
		Meta:      protocol.Meta{"agentd/notice": u.Severity},
	}}
	out := append([]byte(nil), acpUpdatePrefix...)
	out = append(out, `"params":`...)
	out = protocol.AppendSessionNotification(out, &n)
	return append(out, '}'), true
}

// acpCompaction writes a compaction_update as ACP v1's own: the same compactionId and status,
// the summary (agentd's is one text) as the content blocks ACP's summary is.
func acpCompaction(body []byte) ([]byte, bool) {
	var msg struct {
		Params struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				CompactionID string        `json:"compactionId"`
				Status       string        `json:"status"`
				Summary      string        `json:"summary"`
				Meta         protocol.Meta `json:"_meta,omitempty"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return nil, false
	}
	u := msg.Params.Update
	type acpUpdate struct {
		SessionUpdate string                  `json:"sessionUpdate"`
		CompactionID  string                  `json:"compactionId"`
		Status        string                  `json:"status"`
		Summary       []protocol.ContentBlock `json:"summary,omitempty"`
		Meta          protocol.Meta           `json:"_meta,omitempty"`
	}
	out := acpUpdate{SessionUpdate: protocol.UpdateCompactionUpdate, CompactionID: u.CompactionID, Status: u.Status, Meta: u.Meta}
	if u.Summary != "" {
		out.Summary = []protocol.ContentBlock{{Type: "text", Text: u.Summary}}
	}
	params, err := json.Marshal(struct {
		SessionID string    `json:"sessionId"`
		Update    acpUpdate `json:"update"`
	}{msg.Params.SessionID, out})
	if err != nil {
		return nil, false
	}
	b := append([]byte(nil), acpUpdatePrefix...)
	b = append(b, `"params":`...)
	b = append(b, params...)
	return append(b, '}'), true
}

// acpRename is acpTranslate's path without decoding; ok is false when the body needs the
// decoding path (or is not a message, which that path passes on to the decoder).
func acpRename(incoming bool, body []byte) (out []byte, ok bool) {
	v, ok := jsonrpc.Scan(body)
	if !ok {
		return nil, false
	}
	switch v.Kind {
	case jsonrpc.KindAnswer:
		return body, true
	case jsonrpc.KindCall, jsonrpc.KindNotification:
	default:
		return nil, false
	}
	if len(v.Method) < 2 || v.Method[0] != '"' || bytes.IndexByte(v.Method, '\\') >= 0 {
		return nil, false
	}
	method := string(v.Method[1 : len(v.Method)-1])
	if method == "$/cancel_request" || method == "$/cancelRequest" {
		return nil, false
	}
	var name string
	var renamed bool
	if incoming {
		name, renamed = acpIncoming(method)
	} else {
		var drop bool
		name, renamed, drop = acpOutgoing(method)
		if drop {
			return nil, true
		}
	}
	if !renamed {
		return body, true
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false // not written as it is: the decoding path quotes it
		}
	}
	at, end := v.MethodAt, v.MethodAt+len(v.Method)
	out = make([]byte, 0, len(body)-len(v.Method)+len(name)+2)
	out = append(out, body[:at]...)
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, '"')
	return append(out, body[end:]...), true
}

// acpTable replaces the LSP lifecycle with ACP's and adds ACP's own methods.
func (s *Server) acpTable(t map[string]method) {
	t["initialize"] = method{call: (*Server).acpInitialize, inline: true}
	delete(t, "shutdown")
	t["authenticate"] = handler(nil, (*Server).acpAuthenticate)
	t["logout"] = handler(nil, (*Server).acpLogout)
	t["agent/session/set_mode"] = handler(nil, (*Server).acpSetMode)
	t[protocol.MethodSessionNew] = handler(nil, (*Server).acpSessionNew)
	t[protocol.MethodSessionPrompt] = handler(nil, (*Server).acpPrompt)
	t[protocol.MethodSessionSetConfigOption] = handler(nil, (*Server).acpSetConfigOption)
	t[protocol.MethodSessionDelete] = handler(nil, (*Server).acpSessionDelete)
}

// acpSessionDelete is session/delete, which ACP asks to succeed silently for a session that is
// already gone or never was (the LSP door names it unknown): the client's list is what it wants
// to end up without it. A malformed id deletes nothing either way (the store checks it).
func (s *Server) acpSessionDelete(ctx context.Context, p *protocol.SessionIDParams) (empty, error) {
	err := s.manager().Delete(ctx, p.SessionID)
	if errors.Is(err, session.ErrUnknownSession) {
		return empty{}, nil
	}
	return empty{}, err
}

// acpSetConfigParams is ACP v1's SetSessionConfigOptionRequest: a value id, or (type "boolean")
// a boolean for a boolean option.
type acpSetConfigParams struct {
	SessionID string          `json:"sessionId"`
	ConfigID  string          `json:"configId"`
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
}

// acpSetConfigOption is session/set_config_option: a value id for a select (mode, model,
// thought_level), {type: "boolean", value: true | false} for the boolean answer_review, which
// the session checks names a boolean option.
func (s *Server) acpSetConfigOption(ctx context.Context, p *acpSetConfigParams) (protocol.SetConfigOptionResult, error) {
	if p.Type == protocol.ConfigBoolean {
		var on bool
		if err := json.Unmarshal(p.Value, &on); err != nil {
			return protocol.SetConfigOptionResult{}, paramError("value", "expected a boolean for type \"boolean\", got "+string(p.Value))
		}
		return s.manager().SetConfigOption(ctx, protocol.SetConfigOptionParams{SessionID: p.SessionID, ConfigID: p.ConfigID,
			Type: protocol.ConfigBoolean, Value: strconv.FormatBool(on)})
	}
	var value string
	if len(p.Value) > 0 {
		if err := json.Unmarshal(p.Value, &value); err != nil {
			return protocol.SetConfigOptionResult{}, paramError("value", "expected a value id (a string), got "+string(p.Value))
		}
	}
	return s.manager().SetConfigOption(ctx, protocol.SetConfigOptionParams{SessionID: p.SessionID, ConfigID: p.ConfigID, Value: value})
}

// acpPrompt is session/prompt on the ACP door. A turn that failed (a provider error, a missing
// key, a server that does not answer) answers with a JSON-RPC error whose message is the text
// the user reads, as every ACP client shows a failed prompt; the LSP door's normal result with
// _meta["agentd/error"] would end as a silent end_turn there. A missing or refused key is ACP's
// auth_required, which a client answers by offering the terminal auth method.
func (s *Server) acpPrompt(ctx context.Context, p *protocol.PromptParams) (protocol.PromptResult, error) {
	res, err := prompt(s.manager(), ctx, *p)
	if err != nil {
		return res, err
	}
	em, ok := res.Meta["agentd/error"].(protocol.ErrorMeta)
	if !ok {
		return res, nil
	}
	code := jsonrpc.InternalError
	if em.Kind == string(providers.ErrAuth) {
		code = CodeAuthRequired
	}
	data, _ := json.Marshal(em)
	return protocol.PromptResult{}, &jsonrpc.WireError{Code: code, Message: "The model request failed: " + em.Message, Data: data}
}

// acpInitParams is ACP's InitializeRequest, the part agentd reads.
type acpInitParams struct {
	ProtocolVersion    int `json:"protocolVersion"`
	ClientCapabilities struct {
		FS struct {
			ReadTextFile  bool `json:"readTextFile"`
			WriteTextFile bool `json:"writeTextFile"`
		} `json:"fs"`
		Terminal    bool                              `json:"terminal"`
		Elicitation *protocol.ElicitationCapabilities `json:"elicitation"`
		Auth        struct {
			Terminal bool `json:"terminal"`
		} `json:"auth"`
		Session struct {
			Notices       json.RawMessage `json:"notices"`
			Compaction    json.RawMessage `json:"compaction"`
			ConfigOptions struct {
				Boolean json.RawMessage `json:"boolean"`
			} `json:"configOptions"`
		} `json:"session"`
	} `json:"clientCapabilities"`
	ClientInfo *protocol.ClientInfo `json:"clientInfo,omitempty"`
}

// acpAuthMethod is one of ACP's authMethods; agentd offers the terminal method the ACP registry
// asks for (the client runs `agentd key set` in a terminal) to a client that advertised
// clientCapabilities.auth.terminal, and to any other the same method as ACP's default kind,
// "agent" (no type, no args), which ACP forbids it to offer as terminal: authenticate then says
// whether the key is there and what to run if not.
type acpAuthMethod struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Type        string   `json:"type,omitempty"`
	Args        []string `json:"args,omitempty"`
}

// acpAuthMethods is initialize's authMethods for a client that can (terminal) or cannot run a
// terminal method.
func acpAuthMethods(terminal bool) []acpAuthMethod {
	m := acpAuthMethod{ID: AuthMethodKey, Name: "API key",
		Description: "Store the API key of the current provider with `agentd key set URL` (in the system keyring)."}
	if terminal {
		m.Type, m.Args = "terminal", []string{"key", "set"}
	}
	return []acpAuthMethod{m}
}

type acpInitResult struct {
	ProtocolVersion   int                  `json:"protocolVersion"`
	AgentCapabilities acpAgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []acpAuthMethod      `json:"authMethods"`
	AgentInfo         protocol.ClientInfo  `json:"agentInfo"`
	Meta              protocol.Meta        `json:"_meta,omitempty"`
}

// acpAgentCapabilities is ACP v1's AgentCapabilities as the ACP door fills it: the LSP door's
// (protocol.AgentCapabilities) plus what only ACP has, additionalDirectories and auth.logout.
type acpAgentCapabilities struct {
	LoadSession         bool                        `json:"loadSession"`
	SessionCapabilities acpSessionCapabilities      `json:"sessionCapabilities"`
	PromptCapabilities  protocol.PromptCapabilities `json:"promptCapabilities"`
	MCPCapabilities     protocol.MCPCapabilities    `json:"mcpCapabilities"`
	Auth                acpAgentAuthCapabilities    `json:"auth"`
}

// acpAgentAuthCapabilities: Logout says agentd serves logout (acpLogout).
type acpAgentAuthCapabilities struct {
	Logout *struct{} `json:"logout,omitempty"`
}

// AppendJSON appends c as json.Marshal writes it, for acpInitResult's writer (init_json.go); it
// is written once per process, so encoding/json does it.
func (c acpAgentCapabilities) AppendJSON(dst []byte) []byte {
	b, _ := json.Marshal(c) // bools and empty structs only: it cannot fail
	return append(dst, b...)
}

type acpSessionCapabilities struct {
	List   *struct{} `json:"list,omitempty"`
	Resume *struct{} `json:"resume,omitempty"`
	Close  *struct{} `json:"close,omitempty"`
	Delete *struct{} `json:"delete,omitempty"`
	// AdditionalDirectories: session/new's additionalDirectories become roots of the session
	// beside its cwd (workspace.NewRoots), as on the LSP door.
	AdditionalDirectories *struct{} `json:"additionalDirectories,omitempty"`
}

// AuthMethodKey is the id of the terminal auth method.
const AuthMethodKey = "agentd-key"

func (s *Server) acpInitialize(ctx context.Context, raw json.RawMessage) (any, error) {
	if err := s.checkNew(); err != nil {
		return nil, err
	}
	var p acpInitParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	version := ACPProtocolVersion
	if p.ProtocolVersion > 0 && p.ProtocolVersion < version {
		version = p.ProtocolVersion
	}
	// ACP has no initializationOptions: settings come from the user file (loaded by main); each
	// session/new takes the project file of its own cwd, under the trust rules (sessionProject).
	caps := Capabilities{PositionEncoding: "utf-16", ACP: true}
	caps.Agent.FS.ReadTextFile = p.ClientCapabilities.FS.ReadTextFile
	caps.Agent.Permissions.UI = true // every ACP client answers session/request_permission
	caps.WriteTextFile = p.ClientCapabilities.FS.WriteTextFile
	caps.Terminal = p.ClientCapabilities.Terminal
	caps.Agent.Elicitation = p.ClientCapabilities.Elicitation
	offered := func(c json.RawMessage) bool { return len(c) > 0 && string(c) != "null" }
	s.acp.notices.Store(offered(p.ClientCapabilities.Session.Notices))
	s.acp.compaction.Store(offered(p.ClientCapabilities.Session.Compaction))
	s.acp.booleans.Store(offered(p.ClientCapabilities.Session.ConfigOptions.Boolean))
	s.mu.Lock()
	s.caps = caps
	s.mu.Unlock()
	if err := s.startEngine(caps); err != nil {
		return nil, err
	}
	res := acpInitResult{
		ProtocolVersion: version,
		AgentCapabilities: acpAgentCapabilities{
			LoadSession: true,
			// HTTP MCP servers in session/new's mcpServers run as the user's own do (issue 29).
			MCPCapabilities: protocol.MCPCapabilities{HTTP: true},
			SessionCapabilities: acpSessionCapabilities{
				List: &struct{}{}, Resume: &struct{}{}, Close: &struct{}{}, Delete: &struct{}{}, AdditionalDirectories: &struct{}{},
			},
			PromptCapabilities: protocol.PromptCapabilities{Image: s.provs.ImagesAccepted(), EmbeddedContext: true},
			Auth:               acpAgentAuthCapabilities{Logout: &struct{}{}},
		},
		AuthMethods: acpAuthMethods(p.ClientCapabilities.Auth.Terminal),
		AgentInfo:   protocol.ClientInfo{Name: "agentd", Title: "agentd", Version: s.opts.Version},
		Meta:        protocol.Meta{"agentd/providers": s.provs.List(ctx)},
	}
	s.mu.Lock()
	s.state = stateRunning
	s.mu.Unlock()
	client := ""
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name
	}
	s.log.Info("initialized (ACP)", zap.String("client", client), zap.Int("protocolVersion", version),
		zap.Bool("readTextFile", caps.Agent.FS.ReadTextFile), zap.Bool("writeTextFile", caps.WriteTextFile),
		zap.Bool("terminal", caps.Terminal))
	return res, nil
}

// acpSessionNew is session/new. The session's project layer is its own cwd's
// .agentd/config.json (sessionProject), never a store-wide one the last session/new replaced.
func (s *Server) acpSessionNew(ctx context.Context, p *protocol.SessionNewParams) (protocol.SessionNewResult, error) {
	return s.manager().New(ctx, *p)
}

type acpAuthenticateParams struct {
	MethodID string `json:"methodId"`
}

// acpAuthenticate succeeds when the current provider has a key (or needs none); otherwise it
// answers ACP's auth_required error naming what to run.
func (s *Server) acpAuthenticate(ctx context.Context, p *acpAuthenticateParams) (empty, error) {
	if p.MethodID != AuthMethodKey {
		return empty{}, paramError("methodId", fmt.Sprintf("unknown auth method %q (known: %s)", p.MethodID, AuthMethodKey))
	}
	st := s.settings.Get()
	current := st.Provider
	for _, info := range s.provs.List(ctx) {
		if info.ProviderID != current {
			continue
		}
		if info.KeyStatus == protocol.KeyMissing {
			url := info.BaseURL
			if url == "" {
				url = st.Providers[current].BaseURL
			}
			return empty{}, jsonrpc.NewError(CodeAuthRequired, fmt.Sprintf(
				"authenticate: provider %q has no API key; run `agentd key set %s` (or set its apiKeyEnv variable) and try again",
				current, url))
		}
		return empty{}, nil
	}
	return empty{}, jsonrpc.NewError(CodeAuthRequired, fmt.Sprintf(
		"authenticate: no provider %q is configured; add it under \"providers\" in %s", current, config.UserConfigPath()))
}

// acpLogout is ACP's logout: agentd forgets the key it keeps for the current provider's origin
// in its own secret store (the one `agentd key set` files it in), and the next turn needs a key
// again. A key that still reaches the provider from somewhere agentd does not own (an environment
// variable, agent/providers/set) is not forgotten: logout says where it comes from instead of
// answering as if the user were logged out.
func (s *Server) acpLogout(ctx context.Context, _ *struct{}) (empty, error) {
	r, err := s.provs.resolve(ctx, "", false)
	if err != nil {
		return empty{}, err
	}
	if r.Status == keys.StatusNotNeeded {
		return empty{}, nil // a provider without a key (a local server, a replay file): nothing to forget
	}
	if s.opts.Secrets != nil && r.Target.BaseURL != "" {
		if err := s.opts.Secrets.Delete(r.Target.BaseURL); err != nil {
			return empty{}, jsonrpc.NewError(jsonrpc.InternalError, "logout: the key could not be removed from "+s.opts.Secrets.Where()+": "+err.Error())
		}
		s.provs.changed()
	}
	if after, err := s.provs.resolve(ctx, "", false); err == nil && keyStatus(after.Status) == protocol.KeySet {
		return empty{}, jsonrpc.NewError(jsonrpc.InternalError, fmt.Sprintf(
			"logout: provider %q still has a key from %s, which agentd does not keep; remove it there to log out", s.settings.Get().Provider, after.Source))
	}
	s.log.Info("logged out", zap.String("provider", s.settings.Get().Provider))
	return empty{}, nil
}

type acpSetModeParams struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// acpSetMode is ACP's session/set_mode: the "mode" config option by another name.
func (s *Server) acpSetMode(ctx context.Context, p *acpSetModeParams) (empty, error) {
	_, err := s.manager().SetConfigOption(ctx, protocol.SetConfigOptionParams{SessionID: p.SessionID, ConfigID: "mode", Value: p.ModeID})
	var pe *session.ParamError
	if errors.As(err, &pe) && pe.Field == "value" {
		pe.Field = "modeId"
	}
	return empty{}, err
}
