package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// TestImageRefusedForModelWithoutVision: an image to a model the table (or the settings) says
// cannot read images fails the prompt with a clear parameter error, and no request is made; the
// settings' override lets it through.
func TestImageRefusedForModelWithoutVision(t *testing.T) {
	h := newHarness(t, reply{events: textReply("I see a cat.")})
	h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: "qwen2.5-coder:7b"}
	h.newSession()
	blocks := []protocol.ContentBlock{protocol.TextBlock("what is this?"), {Type: "image", MimeType: "image/png", Data: "iVBORw0KGgo="}}
	_, err := h.m.Prompt(context.Background(), protocol.PromptParams{SessionID: h.sid, Prompt: blocks})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Field != "prompt" || !contains(pe.Message, "qwen2.5-coder:7b", "cannot read images", "capabilities.images") {
		t.Fatalf("err = %v", err)
	}
	if n := len(h.prov.requests()); n != 0 {
		t.Fatalf("%d requests made", n)
	}
	if n := len(h.m.sessions[h.sid].historySnapshot()); n != 0 {
		t.Fatalf("the refused prompt reached the history (%d messages)", n)
	}
	yes := true
	h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: "qwen2.5-coder:7b", Capabilities: &config.Capabilities{Images: &yes}}
	if res, err := h.m.Prompt(context.Background(), protocol.PromptParams{SessionID: h.sid, Prompt: blocks}); err != nil || res.StopReason != protocol.StopEndTurn {
		t.Fatalf("with images: true: %v %+v", err, res)
	}
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestModelOptionCarriesPromptCapabilities: the model option's _meta follows the session's model.
func TestModelOptionCarriesPromptCapabilities(t *testing.T) {
	h := newHarness(t)
	h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: "llama3.1:8b"}
	h.set.Providers["vision"] = config.ProviderSettings{APIType: "fake", Model: "gpt-4o"}
	h.newSession()
	image := func(opts []protocol.ConfigOption) bool {
		for _, o := range opts {
			if o.ID == "model" {
				return o.Meta[protocol.MetaPromptCapabilities].(protocol.PromptCapabilities).Image
			}
		}
		t.Fatal("no model option")
		return false
	}
	if image(h.m.sessions[h.sid].configOptions()) {
		t.Fatal("llama3.1 offered images")
	}
	res, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "model", Value: "vision"})
	if err != nil || !image(res.ConfigOptions) {
		t.Fatalf("after switching to gpt-4o: %v", err)
	}
}

// TestThinkingAndWindowFollowTheModel: thinking is asked only of a model that has it, and the
// context window in usage_update is the model's.
func TestThinkingAndWindowFollowTheModel(t *testing.T) {
	for _, c := range []struct {
		model    string
		thinking bool
		window   int
	}{
		{"qwen2.5-coder:7b", false, 32768},
		{"claude-sonnet-4-5", true, 200000},
	} {
		h := newHarness(t, reply{events: textReply("ok")})
		h.set.Thinking = config.Thinking{Enabled: true}
		h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: c.model, ToolCalling: config.ToolCallingNative}
		h.newSession()
		h.prompt("hi")
		req := h.prov.requests()[0]
		if req.Thinking.Enabled != c.thinking {
			t.Errorf("%s: thinking requested = %v", c.model, req.Thinking.Enabled)
		}
		uu := kinds(h.client.snapshot(), protocol.UpdateUsageUpdate)
		if len(uu) != 1 || *uu[0].Size != c.window {
			t.Errorf("%s: usage updates %s", c.model, dumpUpdates(uu))
		}
	}
	_ = providers.DefaultContextWindow
}

// TestThoughtLevelOnlyForAModelThatThinks: with thinking on in the settings, the thought_level
// option is offered for a model that reasons visibly and not for one that does not, follows a
// model switch, and cannot be set for the latter.
func TestThoughtLevelOnlyForAModelThatThinks(t *testing.T) {
	h := newHarness(t)
	h.set.Thinking = config.Thinking{Enabled: true}
	h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: "gpt-4o", ToolCalling: config.ToolCallingNative}
	h.set.Providers["deep"] = config.ProviderSettings{APIType: "fake", Model: "claude-sonnet-4-5", ToolCalling: config.ToolCallingNative}
	h.newSession()
	has := func(opts []protocol.ConfigOption) bool {
		return slices.ContainsFunc(opts, func(o protocol.ConfigOption) bool { return o.ID == "thought_level" })
	}
	if has(h.m.sessions[h.sid].configOptions()) {
		t.Error("thought_level offered for gpt-4o, which does not reason visibly")
	}
	_, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "thought_level", Value: "high"})
	if err == nil || !strings.Contains(err.Error(), `"gpt-4o" does not reason visibly`) {
		t.Errorf("setting thought_level for gpt-4o: %v", err)
	}
	res, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "model", Value: "deep"})
	if err != nil || !has(res.ConfigOptions) {
		t.Errorf("after switching to claude-sonnet-4-5: %+v, %v; want thought_level offered", res.ConfigOptions, err)
	}
	if _, err := h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "thought_level", Value: "high"}); err != nil {
		t.Error(err)
	}
	// The provider's capabilities setting has the last word.
	yes := true
	h.set.Providers["fake"] = config.ProviderSettings{APIType: "fake", Model: "gpt-4o", Capabilities: &config.Capabilities{Thinking: &yes}}
	h.m.SetConfigOption(context.Background(), protocol.SetConfigOptionParams{SessionID: h.sid, ConfigID: "model", Value: "fake"})
	if !has(h.m.sessions[h.sid].configOptions()) {
		t.Error("thought_level not offered for a model whose capabilities setting says it thinks")
	}
}
