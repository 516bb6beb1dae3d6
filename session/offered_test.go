package session

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
)

func offeredNames(req *providers.Request) []string {
	var out []string
	for _, s := range req.Tools {
		out = append(out, s.Name)
	}
	return out
}

// TestWebToolsOfferedOnlyWhenEnabled: with web.enabled false (the default) the model is neither
// declared web_fetch nor told of it in the system prompt; turning it on offers it from the next
// turn, and turning it off again takes it away.
func TestWebToolsOfferedOnlyWhenEnabled(t *testing.T) {
	h := newHarness(t, reply{events: textReply("one")}, reply{events: textReply("two")}, reply{events: textReply("three")})
	h.tools = tools.Default()
	h.m = h.manager()
	h.newSession()
	h.prompt("first")
	h.set.Web.Enabled = true
	h.prompt("second")
	h.set.Web.Enabled = false
	h.prompt("third")
	var reqs []*providers.Request
	for _, r := range h.prov.requests() {
		if len(r.Tools) > 0 {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) != 3 {
		t.Fatalf("%d turn requests", len(reqs))
	}
	for i, want := range []bool{false, true, false} {
		names := offeredNames(reqs[i])
		if got := slices.Contains(names, "web_fetch"); got != want {
			t.Errorf("turn %d: web_fetch offered %v, want %v (%v)", i+1, got, want, names)
		}
		if got := strings.Contains(reqs[i].System, "web_fetch"); got != want {
			t.Errorf("turn %d: system prompt names web_fetch: %v, want %v", i+1, got, want)
		}
		if !slices.Contains(names, "read_file") {
			t.Errorf("turn %d: read_file not offered", i+1)
		}
	}
	if reqs[0].System != reqs[2].System {
		t.Error("the system prompt changed with the web turned off again: the prompt cache misses")
	}
}
