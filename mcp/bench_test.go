package mcp

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/tools"
)

// BenchmarkCallThroughAgentd is one contributed call as a turn runs it (the snapshot's Tool.Run:
// argument decoding, the permission hook, the timeout, the client's call, cleaning and capping the
// result) against the hostile test server's echo tool over stdio. BenchmarkCallDirect is the same
// call made straight on the SDK's client; the difference is agentd's overhead.
func BenchmarkCallThroughAgentd(b *testing.B) {
	p := NewPool(zap.NewNop())
	defer p.Close()
	set := p.Open([]Config{stdioConfig("bench", "-many", "0")}, tools.Default(), nil)
	reg := set.Snapshot(context.Background())
	tool, ok := reg.Lookup("echo")
	if !ok {
		b.Fatal("no echo")
	}
	env := &tools.Env{Permit: func(context.Context, tools.PermissionRequest) error { return nil }}
	args := []byte(`{"q":"hello"}`)
	b.ResetTimer()
	for b.Loop() {
		if r := tool.Run(context.Background(), env, args); r.IsError {
			b.Fatal(r.Output)
		}
	}
}

func BenchmarkCallDirect(b *testing.B) {
	c := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: exec.Command(testServer, "-many", "0")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"q": "hello"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStartThreeStdio is what a session pays for three stdio servers: start them (in
// parallel), list their tools, build the first snapshot, and stop them.
func BenchmarkStartThreeStdio(b *testing.B) {
	for b.Loop() {
		p := NewPool(zap.NewNop())
		var cfgs []Config
		for i := range 3 {
			cfgs = append(cfgs, stdioConfig(fmt.Sprintf("s%d", i), "-many", "5"))
		}
		set := p.Open(cfgs, tools.Default(), nil)
		if reg := set.Snapshot(context.Background()); len(reg.List()) == len(tools.Default().List()) {
			b.Fatal("no server tools")
		}
		set.Close()
	}
}
