package mcp

import (
	"context"
	"strings"
	"testing"
	"time"
)

// What a broken or hostile stdio server sends, through the SDK's client: each case is a clear
// error result naming the server, never a hang or a crash; after the harmless ones the session
// lives on and the next call works; after the fatal ones the server is down and says why. (These
// are the cases the deleted mcp/internal/client's TestHostileStdio held its client to.)
func TestHostileStdioServer(t *testing.T) {
	for _, c := range []struct {
		mode string
		err  string // in the first call's result; "" means it must succeed
		dead bool   // the session ends
	}{
		{mode: "notjson"},
		{mode: "unknownid"},
		{mode: "neither"},
		{mode: "baderror", err: "failed this call"},
		{mode: "badresult", err: "failed this call"},
		{mode: "toolong", err: "exceeded the size limit", dead: true},
		{mode: "ends", err: "failed this call", dead: true},
	} {
		t.Run(c.mode, func(t *testing.T) {
			cfg := stdioConfig("raw", "-raw", c.mode)
			cfg.Timeout = 5 * time.Second
			set, _ := open(t, cfg)
			reg := set.Snapshot(context.Background())
			first := run(t, reg, "t", `{}`)
			switch {
			case c.err == "" && (first.IsError || first.Output != "ok"):
				t.Errorf("the first call = %+v", first)
			case c.err != "" && (!first.IsError || !strings.Contains(first.Output, c.err) || !strings.Contains(first.Output, "raw")):
				t.Errorf("the first call = %+v, want an error containing %q", first, c.err)
			}
			if c.dead {
				sv := set.servers[0]
				waitFor(t, "the server to be down", func() bool {
					sv.mu.Lock()
					defer sv.mu.Unlock()
					return sv.state == StateDown
				})
				return
			}
			if again := run(t, reg, "t", `{}`); again.IsError || again.Output != "ok" {
				t.Errorf("the call after = %+v", again)
			}
		})
	}
}
