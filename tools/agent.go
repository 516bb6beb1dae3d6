package tools

import (
	"context"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
)

// AgentRequest is one agent call as the engine runs it: the definition to run (ExploreAgentName
// when the model named none) and the task the child reads as its first and only user message.
type AgentRequest struct {
	Description string
	Prompt      string
	Agent       string
}

type agentIn struct {
	Description string `json:"description" schema:"maxLength=200"`
	Prompt      string `json:"prompt" schema:"maxLength=100000"`
	Agent       string `json:"agent,omitempty" schema:"maxLength=64"`
}

func (in agentIn) title() string {
	d := strings.TrimSpace(in.Description)
	if d == "" {
		return ""
	}
	name := strings.TrimSpace(in.Agent)
	if name == "" {
		name = ExploreAgentName
	}
	return "Agent " + clip.String(name, 64, "…") + ": " + clip.String(d, 80, "…")
}

// AgentTool is the agent tool: it runs a child conversation (a subagent) with a fresh context, the
// named definition's system text and tools, and returns the child's final answer. The engine does
// the running (Env.RunAgent); a child's own calls ask like the parent's, so the tool itself reads
// nothing and is a read.
var AgentTool Tool = &typed[agentIn]{spec: Spec{Name: "agent", Effect: EffectRead, Kind: "think", Title: "Agent"}, run: runAgent}

func runAgent(ctx context.Context, env *Env, in agentIn) Result {
	if strings.TrimSpace(in.Prompt) == "" {
		return Errorf("field prompt is empty; give the subagent its whole task: it sees nothing of this conversation")
	}
	if strings.TrimSpace(in.Description) == "" {
		return Errorf("field description is empty; give a short (3-5 word) description of the task")
	}
	if env.RunAgent == nil {
		return Errorf("subagents are not available here: a subagent cannot start another one")
	}
	name := strings.TrimSpace(in.Agent)
	if name == "" {
		name = ExploreAgentName
	}
	return env.RunAgent(ctx, AgentRequest{Description: strings.TrimSpace(in.Description), Prompt: in.Prompt, Agent: name})
}
