package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/tools/policy"
)

// TestManagerValidatesEveryRequest calls the Manager directly, as agentd exec does, with the bad
// params rpc used to catch before it: each is refused with a ParamError naming the field.
func TestManagerValidatesEveryRequest(t *testing.T) {
	h := newHarness(t)
	sid := h.newSession()
	ctx := context.Background()
	calls := map[string]func() error{
		"cwd: required": func() error { _, err := h.m.New(ctx, protocol.SessionNewParams{}); return err },
		`cwd: "rel" is not an absolute path`: func() error {
			_, err := h.m.New(ctx, protocol.SessionNewParams{Cwd: "rel"})
			return err
		},
		`additionalDirectories[0]: "x" is not an absolute path`: func() error {
			_, err := h.m.New(ctx, protocol.SessionNewParams{Cwd: h.dir, AdditionalDirectories: []string{"x"}})
			return err
		},
		`_meta.agentd/mode: mode "yolo" is not one of ask, auto, plan`: func() error {
			_, err := h.m.New(ctx, protocol.SessionNewParams{Cwd: h.dir, Meta: protocol.Meta{"agentd/mode": "yolo"}})
			return err
		},
		"mcpServers[0].name: required": func() error {
			_, err := h.m.New(ctx, protocol.SessionNewParams{Cwd: h.dir, MCPServers: []json.RawMessage{json.RawMessage(`{}`)}})
			return err
		},
		"sessionId: required": func() error { _, err := h.m.Load(ctx, protocol.SessionLoadParams{Cwd: h.dir}); return err },
		"cwd: required(load)": func() error {
			_, err := h.m.Resume(ctx, protocol.SessionLoadParams{SessionID: sid})
			return err
		},
		`cwd: "r" is not an absolute path`: func() error { _, err := h.m.List(ctx, protocol.SessionListParams{Cwd: "r"}); return err },
		"sessionId: required(close)":       func() error { return h.m.Close(ctx, "") },
		"sessionId: required(delete)":      func() error { return h.m.Delete(ctx, "") },
		"prompt: must hold at least one content block": func() error {
			_, err := h.m.Prompt(ctx, protocol.PromptParams{SessionID: sid})
			return err
		},
		`prompt[0].type: "video" is not one of text, image, resource_link, resource`: func() error {
			_, err := h.m.Prompt(ctx, protocol.PromptParams{SessionID: sid, Prompt: []protocol.ContentBlock{{Type: "video"}}})
			return err
		},
		"prompt[0].mimeType: required for an image": func() error {
			_, err := h.m.Prompt(ctx, protocol.PromptParams{SessionID: sid, Prompt: []protocol.ContentBlock{{Type: "image", Data: "AA"}}})
			return err
		},
		"value: required": func() error {
			_, err := h.m.SetConfigOption(ctx, protocol.SetConfigOptionParams{SessionID: sid, ConfigID: "mode"})
			return err
		},
		`value: mode "yolo" is not one of ask, auto, plan`: func() error {
			_, err := h.m.SetConfigOption(ctx, protocol.SetConfigOptionParams{SessionID: sid, ConfigID: "mode", Value: "yolo"})
			return err
		},
	}
	for want, call := range calls {
		want, _, _ = strings.Cut(want, "(")
		err := call()
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Error() != want {
			t.Errorf("got %v, want the ParamError %q", err, want)
		}
	}
}

// The policy keeps its own copy of the permission option ids so it does not import the wire
// package; this holds the copy equal to the wire's.
func TestPolicyOptionsAreTheWires(t *testing.T) {
	for policyID, wireID := range map[string]string{
		policy.OptionAllowOnce:    protocol.OptionAllowOnce,
		policy.OptionAllowSession: protocol.OptionAllowSession,
		policy.OptionAllowAlways:  protocol.OptionAllowAlways,
		policy.OptionRejectOnce:   protocol.OptionRejectOnce,
		policy.OptionRejectAlways: protocol.OptionRejectAlways,
	} {
		if policyID != wireID {
			t.Errorf("policy option %q is %q on the wire", policyID, wireID)
		}
	}
}
