package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"go.lsp.dev/uri"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/workspace"
)

// initializeResult is the InitializeResult agentd sends: serverInfo, the negotiated position
// encoding, no textDocumentSync (buffers are pulled), and capabilities.experimental.agent.
type initializeResult struct {
	Capabilities struct {
		PositionEncoding string `json:"positionEncoding"`
		// InlineCompletionProvider is LSP 3.18's: set when the settings configure completions.
		InlineCompletionProvider bool `json:"inlineCompletionProvider,omitempty"`
		Experimental             struct {
			Agent protocol.AgentServerCapabilities `json:"agent"`
		} `json:"experimental"`
	} `json:"capabilities"`
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
}

// initParams is the part of LSP's InitializeParams agentd reads, each field with its LSP type
// (a processId that is not a number, a URI that does not parse, fails initialize naming the
// field); the rest of the object is not read. It used to be decoded whole with
// go.lsp.dev/protocol, whose init (224 allocations) and 740 KB of code every start paid for
// these few fields.
type initParams struct {
	ProcessID  *int32 `json:"processId"`
	ClientInfo *struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
	RootPath         *string `json:"rootPath"`
	RootURI          uri.URI `json:"rootUri"`
	WorkspaceFolders []struct {
		URI  uri.URI `json:"uri"`
		Name string  `json:"name"`
	} `json:"workspaceFolders"`
	Capabilities struct {
		General *struct {
			PositionEncodings []string `json:"positionEncodings"`
		} `json:"general"`
		Workspace *struct {
			ApplyEdit     *bool `json:"applyEdit"`
			WorkspaceEdit *struct {
				DocumentChanges    *bool    `json:"documentChanges"`
				ResourceOperations []string `json:"resourceOperations"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		Window *struct {
			ShowDocument *struct {
				Support bool `json:"support"`
			} `json:"showDocument"`
		} `json:"window"`
	} `json:"capabilities"`
	InitializationOptions struct {
		Agent *protocol.AgentInitOptions `json:"agent"`
	} `json:"initializationOptions"`
}

// checkNew refuses a second initialize, on either door.
func (s *Server) checkNew() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		return jsonrpc.NewError(jsonrpc.InvalidRequest, "initialize: already initialized")
	}
	return nil
}

func (s *Server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	if err := s.checkNew(); err != nil {
		return nil, err
	}
	var ip initParams
	if err := decodeParams(raw, &ip); err != nil {
		return nil, err
	}
	agent := protocol.AgentInitOptions{ProtocolVersion: protocol.ProtocolVersion}
	if ip.InitializationOptions.Agent != nil {
		agent = *ip.InitializationOptions.Agent
	}
	version := protocol.ProtocolVersion
	if agent.ProtocolVersion > 0 && agent.ProtocolVersion < version {
		version = agent.ProtocolVersion
	}

	var offered []string
	if g := ip.Capabilities.General; g != nil {
		offered = g.PositionEncodings
	}
	caps := Capabilities{Agent: agent.ClientCapabilities, PositionEncoding: string(workspace.NegotiateEncoding(offered))}
	if w := ip.Capabilities.Workspace; w != nil {
		caps.ApplyEdit = w.ApplyEdit != nil && *w.ApplyEdit
		if we := w.WorkspaceEdit; we != nil {
			caps.DocumentChanges = we.DocumentChanges != nil && *we.DocumentChanges
			caps.ResourceOps = append(caps.ResourceOps, we.ResourceOperations...)
		}
	}
	if w := ip.Capabilities.Window; w != nil && w.ShowDocument != nil {
		caps.ShowDocument = w.ShowDocument.Support
	}

	// Settings: the client's own. A bad client setting fails initialize, naming the key. The
	// project files are each session's own (sessionProject): the file of the workspace folder
	// that holds the session's cwd, never folder 0's for every session.
	folders := workspaceFolders(&ip)
	if len(agent.Settings) > 0 {
		if err := s.settings.Set(config.LayerInit, agent.Settings); err != nil {
			var ke *config.KeyError
			if errors.As(err, &ke) {
				return nil, paramError("initializationOptions.agent.settings."+ke.Key, ke.Msg)
			}
			return nil, paramError("initializationOptions.agent.settings", err.Error())
		}
	}

	s.mu.Lock()
	s.caps, s.folders = caps, folders
	s.mu.Unlock()
	if err := s.startEngine(caps); err != nil {
		return nil, err
	}

	var res initializeResult
	res.ServerInfo.Name = "agentd"
	res.ServerInfo.Version = s.opts.Version
	res.Capabilities.PositionEncoding = caps.PositionEncoding
	res.Capabilities.InlineCompletionProvider = s.completionSettingsChanged(ctx)
	res.Capabilities.Experimental.Agent = protocol.AgentServerCapabilities{
		ProtocolVersion: version,
		AgentCapabilities: protocol.AgentCapabilities{
			LoadSession: true,
			SessionCapabilities: protocol.SessionCapabilities{
				List: &struct{}{}, Resume: &struct{}{}, Close: &struct{}{}, Delete: &struct{}{},
			},
			PromptCapabilities: protocol.PromptCapabilities{Image: s.provs.ImagesAccepted(), EmbeddedContext: true},
			// MCP servers over stdio, Streamable HTTP and the old HTTP+SSE transport (package mcp).
			MCPCapabilities: protocol.MCPCapabilities{HTTP: true, SSE: true},
		},
		Providers: s.provs.List(ctx),
	}
	s.mu.Lock()
	s.state = stateRunning
	s.mu.Unlock()
	if ip.ProcessID != nil {
		s.watchParent(int(*ip.ProcessID))
	}
	clientName := ""
	if agent.ClientInfo != nil {
		clientName = agent.ClientInfo.Name
	} else if ip.ClientInfo != nil {
		clientName = ip.ClientInfo.Name
	}
	s.log.Info("initialized", zap.String("client", clientName), zap.Int("protocolVersion", version),
		zap.String("positionEncoding", caps.PositionEncoding), zap.Bool("applyEdit", caps.ApplyEdit))
	return res, nil
}

// messageType is window/showMessage's type: LSP's MessageType.
type messageType int

const (
	messageError   messageType = 1
	messageWarning messageType = 2
)

// startEngine builds the bridge and the session manager for this client.
func (s *Server) startEngine(caps Capabilities) error {
	bridge := s.opts.NewBridge(s.conn, caps, s.log.Named("bridge"))
	s.provs.ClientSecret = bridge.Secret
	if caps.Agent.Secrets {
		s.provs.HasClientSecrets = true
	}
	var keyEnv func(config.Settings) []string // nil: session's default list
	if s.provs.Registry != nil {
		keyEnv = s.provs.Registry.KeyEnvNames
	}
	m := s.opts.NewSessions(session.Deps{
		Client:         bridge.Client(),
		Workspaces:     bridge.Workspace,
		Providers:      s.provs,
		Tools:          s.opts.Tools,
		Prompts:        s.opts.Prompts,
		Settings:       s.settings.Get,
		Project:        s.sessionProject,
		StateDir:       s.opts.StateDir,
		Logger:         s.log.Named("session"),
		KeyEnvNames:    keyEnv,
		MCPTokens:      s.opts.MCPTokens,
		MCPClientIDURL: s.opts.MCPClientIDURL,
		// Only an ACP client says it takes boolean config options (acpInitialize).
		BooleanConfigOptions: caps.ACP && s.acp.booleans.Load(),
	})
	s.mu.Lock()
	s.sessions, s.bridge = m, bridge
	s.mu.Unlock()
	return nil
}

// workspaceFolders are the workspace folders of initialize, else rootUri, else rootPath.
func workspaceFolders(p *initParams) []string {
	var out []string
	for _, f := range p.WorkspaceFolders {
		if f.URI.IsFile() {
			out = append(out, f.URI.FsPath())
		}
	}
	if len(out) == 0 {
		if root := workspaceRoot(p); root != "" {
			out = append(out, root)
		}
	}
	return out
}

// sessionProject is session.Deps.Project: a session's project root is the innermost workspace
// folder holding its cwd (the cwd itself when none does, as on the ACP door, where each
// session/new names its own), and its settings take that root's project file as their
// project layer. A file that does not load applies nothing; the session's notice says why.
func (s *Server) sessionProject(cwd string) (string, func() config.Settings) {
	s.mu.Lock()
	folders := s.folders
	s.mu.Unlock()
	root := folderOf(folders, cwd)
	p := s.settings.LoadProject(root)
	if st := s.settings.For(p); st.ProjectNotice != "" {
		s.log.Warn("project settings", zap.String("root", root), zap.String("notice", st.ProjectNotice))
	}
	return root, func() config.Settings { return s.settings.For(p) }
}

// folderOf is the innermost of folders that holds cwd, else cwd.
func folderOf(folders []string, cwd string) string {
	cwd = filepath.Clean(cwd)
	real, _ := filepath.EvalSymlinks(cwd)
	best := ""
	for _, f := range folders {
		f = filepath.Clean(f)
		freal, _ := filepath.EvalSymlinks(f)
		for _, c := range []string{cwd, real} {
			for _, root := range []string{f, freal} {
				if root != "" && c != "" && within(root, c) && len(root) > len(best) {
					best = f
				}
			}
		}
	}
	if best == "" {
		return cwd
	}
	return best
}

// within reports whether path is root or beneath it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// workspaceRoot is the first workspace folder, else rootUri, else rootPath.
func workspaceRoot(p *initParams) string {
	if len(p.WorkspaceFolders) > 0 && p.WorkspaceFolders[0].URI.IsFile() {
		return p.WorkspaceFolders[0].URI.FsPath()
	}
	if p.RootURI.IsFile() {
		return p.RootURI.FsPath()
	}
	if p.RootPath != nil {
		return *p.RootPath
	}
	return ""
}

func (s *Server) shutdown(ctx context.Context, _ json.RawMessage) (any, error) {
	s.mu.Lock()
	sessions := s.sessions
	s.state = stateShutdown
	s.mu.Unlock()
	if sessions != nil {
		if err := sessions.Shutdown(ctx); err != nil {
			s.log.Warn("shutdown", zap.Error(err))
		}
	}
	return nil, nil
}

// didChangeConfiguration takes settings.agent (or settings itself) as the client layer. A bad
// value keeps the previous settings and is shown to the user, naming the key.
func (s *Server) didChangeConfiguration(ctx context.Context, raw json.RawMessage) error {
	var p struct {
		Settings json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	settings := p.Settings
	if len(settings) == 0 || string(settings) == "null" {
		// The pull model's "something changed": agentd does not pull, the client pushes.
		s.log.Debug("didChangeConfiguration without settings ignored")
		return nil
	}
	var wrapped struct {
		Agent json.RawMessage `json:"agent"`
	}
	if json.Unmarshal(settings, &wrapped) == nil && len(wrapped.Agent) > 0 {
		settings = wrapped.Agent
	}
	if err := s.settings.Set(config.LayerClient, settings); err != nil {
		s.showMessage(ctx, messageError, "agentd settings: "+err.Error())
		return err
	}
	s.log.Info("settings changed")
	s.completionSettingsChanged(ctx)
	return nil
}

// showMessage tells the user through window/showMessage; it never blocks the caller for long.
func (s *Server) showMessage(ctx context.Context, typ messageType, msg string) {
	if err := s.conn.Notify(ctx, "window/showMessage", map[string]any{"type": int(typ), "message": msg}); err != nil {
		s.log.Debug("window/showMessage not sent", zap.Error(err))
	}
}
