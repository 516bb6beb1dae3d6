package mcp

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/tools"
)

// threeServers opens three HTTP servers of ten tools each (a_t0..a_t9, b_…, c_…), in that order.
func threeServers(t *testing.T) *Set {
	t.Helper()
	var cfgs []Config
	for _, s := range []string{"a", "b", "c"} {
		var names []string
		for i := range 10 {
			names = append(names, fmt.Sprintf("%s_t%d", s, i))
		}
		cfgs = append(cfgs, httpConfig(s, httpServer(t, echoServer(s, names...))))
	}
	set, _ := open(t, cfgs...)
	return set
}

// Rule 3 shared: with three servers over the budget, each gets its share (4, 4, 4), not the
// first server all 12; the kept tools stay in server then declaration order.
func TestBudgetSharedAcrossServers(t *testing.T) {
	set := threeServers(t)
	reg := set.Snapshot(context.Background())
	var order []string
	per := map[string]int{}
	for _, tl := range reg.List() {
		if mt, ok := tl.(*Tool); ok {
			order = append(order, mt.Name())
			per[mt.Server()]++
		}
	}
	if per["a"] != 4 || per["b"] != 4 || per["c"] != 4 {
		t.Errorf("shares = %v (%v)", per, order)
	}
	want := "a_t0 a_t1 a_t2 a_t3 b_t0 b_t1 b_t2 b_t3 c_t0 c_t1 c_t2 c_t3"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("order = %s, want %s", got, want)
	}
}

// A server that needs less than its share leaves the rest to the others.
func TestBudgetShareLeftToOthers(t *testing.T) {
	small := httpServer(t, echoServer("small", "s_one"))
	var names []string
	for i := range 20 {
		names = append(names, fmt.Sprintf("big_%02d", i))
	}
	set, _ := open(t, httpConfig("small", small), httpConfig("big", httpServer(t, echoServer("big", names...))))
	got := contributed(set.Snapshot(context.Background()))
	if len(got) != Budget || got["s_one"] == nil || got["big_10"] == nil || got["big_11"] != nil {
		t.Errorf("offered = %v", keys(got))
	}
}

// Over the budget, find_tools reaches every tool: it returns the matches (server, name,
// description) and adds them, so the next snapshot (the turn's next step) offers them and they
// run. Under the budget there is no find_tools.
func TestFindToolsReachesEveryTool(t *testing.T) {
	set := threeServers(t)
	reg := set.Snapshot(context.Background())
	if _, ok := reg.Lookup("c_t9"); ok {
		t.Fatal("c_t9 offered without find_tools")
	}
	ft, ok := reg.Lookup(FindToolsName)
	if !ok {
		t.Fatal("no find_tools over the budget")
	}
	if ft.Effect() != tools.EffectRead || ft.Description() == "" {
		t.Errorf("find_tools effect %v, description %q", ft.Effect(), ft.Description())
	}
	gen := set.FoundGen()
	res := ft.Run(context.Background(), &tools.Env{}, []byte(`{"query":"c_t9"}`))
	if res.IsError || !strings.Contains(res.Output, "c_t9 (server c): (MCP server c) c's c_t9") {
		t.Fatalf("find_tools = %+v", res)
	}
	if set.FoundGen() == gen {
		t.Error("find_tools did not say it added tools")
	}
	next := set.Snapshot(context.Background())
	if r := run(t, next, "c_t9", `{}`); r.IsError || r.Output != "c ran c_t9" {
		t.Errorf("the found tool's call = %+v", r)
	}
	if _, ok := next.Lookup("a_t0"); !ok {
		t.Error("the budget's tools were lost")
	}
	// Words match server, name and description; nothing matching says so.
	ft2, _ := next.Lookup(FindToolsName)
	if r := ft2.Run(context.Background(), &tools.Env{}, []byte(`{"query":"nothing-like-it"}`)); r.IsError || !strings.Contains(r.Output, "No MCP tool") {
		t.Errorf("no match = %+v", r)
	}
	if r := ft2.Run(context.Background(), &tools.Env{}, []byte(`{"query":5}`)); !r.IsError {
		t.Errorf("a bad query = %+v", r)
	}

	few, _ := open(t, httpConfig("few", httpServer(t, echoServer("few", "one", "two"))))
	if _, ok := few.Snapshot(context.Background()).Lookup(FindToolsName); ok {
		t.Error("find_tools offered under the budget")
	}
}

// The tools find_tools adds are bounded (MaxFound), and a server's own tool named find_tools is
// dropped as reserved.
func TestFindToolsBounded(t *testing.T) {
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("many_%02d", i))
	}
	names = append(names, FindToolsName)
	set, _ := open(t, httpConfig("many", httpServer(t, echoServer("many", names...))))
	reg := set.Snapshot(context.Background())
	for range 10 {
		ft, _ := reg.Lookup(FindToolsName)
		if _, isServers := ft.(*Tool); isServers {
			t.Fatal("the server's find_tools took the built-in's place")
		}
		ft.Run(context.Background(), &tools.Env{}, []byte(`{"query":"many"}`))
		reg = set.Snapshot(context.Background())
	}
	if n := len(contributed(reg)); n != Budget+MaxFound {
		t.Errorf("%d contributed tools offered, want %d", n, Budget+MaxFound)
	}
}
