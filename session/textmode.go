package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/session/internal/texttools"
)

// respondTool is the terminal tool of the text tool-call protocol: the model answers the user
// through it, and the turn ends.
const respondTool = "respond"

// respondSchema is respond's arguments; its description and the argument's come from the prompt
// config (tools.respond).
const respondSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

// toolModes remembers the origins and models whose server refused native tools, so every later
// turn (of any session, and after a restart) goes straight to the text protocol. It is kept in
// toolcalling.json under the state directory; without one it lives as long as the daemon.
type toolModes struct {
	mu   sync.Mutex
	path string
	log  *zap.Logger
	m    map[string]string // origin + " " + model → config.ToolCalling*
	key  *stateKey
}

// The memo is signed like the per-project state (session/project.go): a program that rewrites it
// cannot switch a model to the text protocol, where a call the model copied may run. A memo that
// does not verify is dropped (a server that still refuses native tools is found out again, once).
func newToolModes(stateDir string, key *stateKey, log *zap.Logger) *toolModes {
	tm := &toolModes{m: map[string]string{}, log: log, key: key}
	if stateDir == "" {
		return tm
	}
	tm.path = filepath.Join(stateDir, "toolcalling.json")
	data, err := os.ReadFile(tm.path)
	if err == nil {
		if err := key.open(data, &tm.m); err != nil {
			log.Warn("toolcalling.json is not applied; starting afresh", zap.Error(err))
			tm.m = map[string]string{}
		}
	}
	return tm
}

func toolModeKey(pcfg providers.Config) string {
	origin := providers.Origin(pcfg.BaseURL)
	if origin == "" {
		origin = "provider:" + pcfg.ID
	}
	return origin + " " + pcfg.Model
}

func (tm *toolModes) get(pcfg providers.Config) string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.m[toolModeKey(pcfg)]
}

// set remembers mode for the provider's origin and model, and saves the memo.
func (tm *toolModes) set(pcfg providers.Config, mode string) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.m[toolModeKey(pcfg)] = mode
	if tm.path == "" {
		return
	}
	data, err := tm.key.seal(tm.m)
	if err != nil {
		tm.log.Warn("could not save toolcalling.json", zap.Error(err))
		return
	}
	if err := os.MkdirAll(filepath.Dir(tm.path), 0o700); err == nil {
		tmp := tm.path + ".tmp"
		if err = os.WriteFile(tmp, data, 0o600); err == nil {
			err = os.Rename(tmp, tm.path)
		}
		if err != nil {
			tm.log.Warn("could not save toolcalling.json", zap.Error(err))
		}
	}
}

// capabilitiesOf is what the provider's model can do under the settings (the model the settings
// name, as the image check reads it, else the resolved one).
func capabilitiesOf(set config.Settings, pcfg providers.Config) providers.Capabilities {
	ps := set.Providers[pcfg.ID]
	if ps.Model == "" {
		ps.Model = pcfg.Model
	}
	return providers.CapabilitiesOf(ps)
}

// toolMode is how the turn's model calls tools: the provider's toolCalling when set, else text
// when the model has no native tools or its server refused them before, else native.
func (m *Manager) toolMode(set config.Settings, pcfg providers.Config, caps providers.Capabilities) string {
	if mode := set.Providers[pcfg.ID].ToolCalling; mode != "" {
		return mode
	}
	if !caps.Tools {
		return config.ToolCallingText
	}
	if m.toolModes.get(pcfg) == config.ToolCallingText {
		return config.ToolCallingText
	}
	return config.ToolCallingNative
}

// fallBackToText answers a server that refused the tools declaration: the turn goes on with the
// text protocol, remembered for the origin and model, and the user is told once.
func (t *turn) fallBackToText() {
	t.mode = config.ToolCallingText
	t.s.m.toolModes.set(t.pcfg, config.ToolCallingText)
	t.s.notice(protocol.SeverityInfo, "The server refused native tool calls for "+t.pcfg.Model+"; agentd uses the text tool-call protocol with this model from now on.", "")
	t.s.m.trace.event(t.s.id, "tool_calling", map[string]any{"mode": config.ToolCallingText, "model": t.pcfg.Model})
}

// textSystem is the system prompt under the text protocol: layout.system with TEXT_TOOLS set and
// the catalog of the turn's tools (respond included), each with its schema. It depends only on
// the prompt config, the tool set and the instructions, so it stays byte for byte the same from
// one request to the next.
func (t *turn) textSystem() string {
	if t.textSys != "" {
		return t.textSys
	}
	set := t.texts()
	run := t.s.instructionsRun()
	run["TEXT_TOOLS"] = true
	var list []map[string]any
	for _, sp := range t.specs() {
		effect := "exec"
		if tool, ok := t.reg.Lookup(sp.Name); ok {
			effect = tool.Effect().String()
		}
		list = append(list, toolEntry(sp, effect))
	}
	list = append(list, toolEntry(respondSpec(set), "answer"))
	run["TOOLS"] = list
	t.textSys = set.Render("layout.system", run)
	if t.s.parent != nil {
		t.textSys = t.s.childSystem + "\n\n" + t.textSys
	}
	return t.textSys
}

// outputConstrainer is a provider whose server constrains the reply to a JSON Schema while it
// samples (providers/openai, for llama-server and Ollama).
type outputConstrainer interface{ ConstrainsOutput() bool }

// constrained says whether the turn's replies under the text protocol are constrained to one
// envelope (texttools.EnvelopeSchema).
func (t *turn) constrained() bool {
	c, ok := t.prov.(outputConstrainer)
	return ok && c.ConstrainsOutput()
}

// envelopeSchema is the output constraint for the turn's tools, respond among them (so a plain
// answer stays possible), built again when the turn's tool set changes (an MCP server's tools
// found or gone).
func (t *turn) envelopeSchema() json.RawMessage {
	if t.envSchema != nil && t.envReg == t.reg {
		return t.envSchema
	}
	specs := append(slices.Clip(t.specs()), respondSpec(t.texts()))
	t.envSchema, t.envReg = texttools.EnvelopeSchema(specs), t.reg
	return t.envSchema
}

func toolEntry(sp providers.ToolSpec, effect string) map[string]any {
	summary := sp.Description
	if i := strings.IndexByte(summary, '\n'); i >= 0 {
		summary = summary[:i]
	}
	var schema bytes.Buffer
	if json.Compact(&schema, sp.Schema) != nil {
		schema.Reset()
		schema.WriteString(`{"type":"object"}`)
	}
	return map[string]any{"NAME": sp.Name, "EFFECT": effect, "SUMMARY": summary, "DESCRIPTION": strings.TrimSpace(sp.Description), "SCHEMA": schema.String()}
}

// respondSpec is respond's spec with its descriptions from the prompt config.
func respondSpec(set *prompts.Set) providers.ToolSpec {
	sp := providers.ToolSpec{Name: respondTool, Schema: json.RawMessage(respondSchema)}
	desc, args, ok := set.Tool(respondTool)
	if !ok {
		return sp
	}
	sp.Description = desc
	if d := args["text"]; d != "" {
		b, _ := json.Marshal(d)
		sp.Schema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":` + string(b) + `}},"required":["text"]}`)
	}
	return sp
}

// textResults renders tool results as the text protocol's one user turn (layout.tool_results).
func (t *turn) textResults(res []texttools.Result) string {
	list := make([]map[string]any, 0, len(res))
	for _, r := range res {
		list = append(list, map[string]any{"NAME": r.Name, "OUTPUT": r.Output, "IS_ERROR": r.IsError})
	}
	return strings.TrimRight(t.texts().Render("layout.tool_results", prompts.Run{"RESULTS": list}), "\n")
}

// invalidCall is what the model reads for an envelope that could not be parsed.
func (t *turn) invalidCall(c texttools.Call) string {
	return t.texts().Render("tool_call_error", prompts.Run{"ERROR": c.Err})
}

// respondAsText turns the respond calls of a history into the assistant text they showed, for a
// model that calls tools natively (the session may have changed models): it has no respond tool,
// and those calls have no results.
func respondAsText(msgs []providers.Message) []providers.Message {
	var out []providers.Message
	for i, m := range msgs {
		if m.Role != providers.RoleAssistant || !hasRespond(m) {
			if out != nil {
				out = append(out, m)
			}
			continue
		}
		if out == nil {
			out = append(make([]providers.Message, 0, len(msgs)), msgs[:i]...)
		}
		nm := providers.Message{Role: m.Role}
		for _, p := range m.Parts {
			if p.Type == providers.PartToolCall && p.ToolName == respondTool {
				if text, ok := respondText(p.Args); ok {
					p = providers.Part{Type: providers.PartText, Text: text}
				}
			}
			nm.Parts = append(nm.Parts, p)
		}
		out = append(out, nm)
	}
	if out == nil {
		return msgs
	}
	return out
}

func hasRespond(m providers.Message) bool {
	for _, p := range m.Parts {
		if p.Type == providers.PartToolCall && p.ToolName == respondTool {
			return true
		}
	}
	return false
}

// respondText reads respond's arguments.
func respondText(args json.RawMessage) (string, bool) {
	var in struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(args, &in) != nil || in.Text == nil {
		return "", false
	}
	return *in.Text, true
}

// announce tells the client about a call that was held back: a respond call that turned out
// invalid is a failed call like any other.
func (t *turn) announce(c *call) {
	if c.title == "" {
		c.title, c.kind = c.name, protocol.KindOther
	}
	t.s.update(protocol.SessionUpdate{SessionUpdate: protocol.UpdateToolCall, ToolCallID: c.id, Title: c.title, Kind: c.kind, Status: protocol.StatusPending})
}

// answer shows a respond call's text as the agent's message and keeps it in the transcript.
func (t *turn) answer(msgID, text string) {
	if text == "" {
		return
	}
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: msgID, Content: &protocol.ContentBlock{Type: "text", Text: text}}
	t.s.update(u)
	t.s.record(record{T: recUpdate, Update: &u})
}

// unfinishedNudge is the loop's unfinished-turn nudge (session/nudge.go) under the text
// protocol: a reply that ended with neither a call nor respond gets tool_call_unfinished, which
// names respond, once per turn (the same once as loop.unfinished_turn); the next reply without one
// ends the turn.
func (t *turn) unfinishedNudge() bool {
	if t.nudges.unfinished {
		return false
	}
	t.nudges.unfinished = true
	t.nudge("unfinished_turn", t.texts().Render("tool_call_unfinished", nil))
	return true
}

// textStep takes a reply's respond calls out of its calls: they were shown as the answer when
// they completed (stream.go). When there was one, the reply's other calls run (the model will not
// read their results: respond ended its turn) and textStep reports true. A respond call whose
// arguments were bad is announced and fails like any other call, for the model to retry.
func (t *turn) textStep(st *step) bool {
	answered := false
	var rest []*call
	for _, c := range st.calls {
		if c.respond && c.invalid == "" {
			answered = true
			continue
		}
		if c.respond {
			t.announce(c)
		}
		rest = append(rest, c)
	}
	if !answered {
		st.calls = rest
		return false
	}
	if len(rest) > 0 && st.stop != providers.StopMaxTokens {
		t.runCalls(rest)
	}
	st.calls = nil
	return true
}

// completeRespond shows a complete respond call's text as the agent's answer; bad arguments
// make it a failed call (textStep announces it).
func (t *turn) completeRespond(msgID string, c *call) {
	text, ok := respondText(c.final)
	if !ok {
		c.invalid = t.s.m.text("tool_call_error", prompts.Run{"ERROR": `respond needs {"text": "your answer"}`})
		return
	}
	t.answer(msgID, text)
}

// model is the session's provider id and the settings of its provider, model included.
func (s *Session) model(set config.Settings) (string, config.ProviderSettings) {
	s.mu.Lock()
	pid := s.providerID
	s.mu.Unlock()
	if pid == "" {
		pid = set.Provider
	}
	return pid, set.Providers[pid]
}

// checkImages refuses a prompt with an image when the session's model cannot read images, before
// any request: the image would be dropped or refused by the server after the whole history was
// sent.
func (s *Session) checkImages(blocks []protocol.ContentBlock) error {
	has := false
	for _, b := range blocks {
		has = has || b.Type == "image"
	}
	if !has {
		return nil
	}
	pid, ps := s.model(s.settings())
	if providers.CapabilitiesOf(ps).Images {
		return nil
	}
	return &ParamError{Field: "prompt", Message: fmt.Sprintf("the model %s (provider %s) cannot read images; remove the image or switch to a model with vision (if it has vision, set providers.%s.capabilities.images to true)", ps.Model, pid, pid)}
}

// promptCapabilitiesMeta is what the model option's _meta says of the session's model, so the
// client offers image attachments only where they can be read.
func (s *Session) promptCapabilitiesMeta(set config.Settings) protocol.Meta {
	_, ps := s.model(set)
	return protocol.Meta{protocol.MetaPromptCapabilities: protocol.PromptCapabilities{Image: providers.CapabilitiesOf(ps).Images, EmbeddedContext: true}}
}
