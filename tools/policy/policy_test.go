package policy

import (
	"testing"

	"github.com/agentd-dev/agentd/tools"
)

var (
	readCall  = Call{Tool: "read_file", Effect: tools.EffectRead, Paths: []string{"/p/a.go"}}
	editCall  = Call{Tool: "edit_file", Effect: tools.EffectWrite, Paths: []string{"/p/src/a.go"}}
	editTwo   = Call{Tool: "rename_path", Effect: tools.EffectWrite, Paths: []string{"/p/src/a.go", "/p/src/sub/b.go"}}
	testCall  = Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"go", "test", "./..."}}
	rmCall    = Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"rm", "-rf", "build"}}
	addDepGo  = Call{Tool: "add_dependency", Effect: tools.EffectExec, Command: []string{"go", "get", "example.com/m@v1"}}
	emptyCall = Call{Tool: "run_program", Effect: tools.EffectExec}
)

func TestDecide(t *testing.T) {
	allowEdits := Grant{Tool: "edit_file", Allow: true, Scope: ScopeSession}
	allowGoTest := Grant{Tool: "run_program", Pattern: "go test", Allow: true, Scope: ScopeProject}
	denyRm := Grant{Tool: "run_program", Pattern: "rm", Allow: false, Scope: ScopeProject}
	allowSrc := Grant{Tool: "*", Pattern: "/p/src/**", Allow: true, Scope: ScopeSession}
	denySub := Grant{Tool: "rename_path", Pattern: "/p/src/sub/**", Allow: false, Scope: ScopeSession}
	allowGoAny := Grant{Tool: "", Pattern: "go", Allow: true, Scope: ScopeSession}

	cases := []struct {
		name   string
		mode   Mode
		grants []Grant
		call   Call
		want   Decision
	}{
		{"read in ask", ModeAsk, nil, readCall, Allow},
		{"read in plan", ModePlan, nil, readCall, Allow},
		{"read in auto", ModeAuto, []Grant{{Tool: "read_file", Allow: false}}, readCall, Allow},
		{"write in ask asks", ModeAsk, nil, editCall, Ask},
		{"exec in ask asks", ModeAsk, nil, testCall, Ask},
		{"write in auto", ModeAuto, nil, editCall, Allow},
		{"exec in auto", ModeAuto, nil, testCall, Allow},
		{"write in plan", ModePlan, []Grant{allowEdits}, editCall, PlanRefuse},
		{"exec in plan", ModePlan, nil, testCall, PlanRefuse},
		{"unknown mode asks", Mode("weird"), nil, editCall, Ask},
		{"tool grant allows", ModeAsk, []Grant{allowEdits}, editCall, Allow},
		{"tool grant for another tool", ModeAsk, []Grant{allowEdits}, editTwo, Ask},
		{"command prefix allows", ModeAsk, []Grant{allowGoTest}, testCall, Allow},
		{"command prefix is word-wise", ModeAsk, []Grant{{Tool: "run_program", Pattern: "go tes", Allow: true}}, testCall, Ask},
		{"command prefix other command", ModeAsk, []Grant{allowGoTest}, rmCall, Ask},
		{"command prefix longer than argv", ModeAsk, []Grant{{Tool: "run_program", Pattern: "go test ./... -v", Allow: true}}, testCall, Ask},
		{"command grant on empty argv", ModeAsk, []Grant{allowGoTest}, emptyCall, Ask},
		{"reject_always denies in ask", ModeAsk, []Grant{denyRm}, rmCall, Deny},
		{"reject_always denies in auto", ModeAuto, []Grant{denyRm}, rmCall, Deny},
		{"reject beats allow", ModeAsk, []Grant{{Tool: "run_program", Allow: true}, denyRm}, rmCall, Deny},
		{"path glob covers all paths", ModeAsk, []Grant{allowSrc}, editTwo, Allow},
		{"path glob must cover every path", ModeAsk, []Grant{{Tool: "*", Pattern: "/p/src/*.go", Allow: true}}, editTwo, Ask},
		{"path glob reject on any path", ModeAuto, []Grant{denySub}, editTwo, Deny},
		{"path glob never matches exec", ModeAsk, []Grant{allowSrc}, testCall, Ask},
		{"any-tool command prefix", ModeAsk, []Grant{allowGoAny}, addDepGo, Allow},
		{"zero grant ignored", ModeAsk, []Grant{{}}, testCall, Ask},
		{"zero grant not a deny in auto", ModeAuto, []Grant{{}}, testCall, Allow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Decide(c.mode, c.grants, c.call); got != c.want {
				t.Fatalf("Decide = %v, want %v", got, c.want)
			}
		})
	}
}

func TestDenyPartialPaths(t *testing.T) {
	// A reject grant refuses a call when it names any of the call's paths; an allow grant must
	// cover them all.
	deny := Grant{Tool: "rename_path", Pattern: "/p/src/sub/**", Allow: false}
	if got := Decide(ModeAuto, []Grant{deny}, editTwo); got != Deny {
		t.Fatalf("got %v", got)
	}
	allow := Grant{Tool: "rename_path", Pattern: "/p/src/sub/**", Allow: true}
	if got := Decide(ModeAsk, []Grant{allow}, editTwo); got != Ask {
		t.Fatalf("got %v", got)
	}
	single := Call{Tool: "rename_path", Effect: tools.EffectWrite, Paths: []string{"/p/src/sub/b.go"}}
	if got := Decide(ModeAuto, []Grant{deny}, single); got != Deny {
		t.Fatalf("got %v", got)
	}
}

func TestGrantFor(t *testing.T) {
	cases := []struct {
		name   string
		call   Call
		option string
		scope  Scope
		want   Grant
	}{
		{"allow once stores nothing", editCall, OptionAllowOnce, ScopeSession, Grant{}},
		{"reject once stores nothing", editCall, OptionRejectOnce, ScopeSession, Grant{}},
		{"unknown option", editCall, "maybe", ScopeSession, Grant{}},
		{"allow session for a write tool", editCall, OptionAllowSession, ScopeProject, Grant{Tool: "edit_file", Allow: true, Scope: ScopeSession}},
		{"allow always for a write tool", editCall, OptionAllowAlways, ScopeProject, Grant{Tool: "edit_file", Allow: true, Scope: ScopeProject}},
		{"allow always defaults to project", editCall, OptionAllowAlways, "", Grant{Tool: "edit_file", Allow: true, Scope: ScopeProject}},
		{"reject always one path", editCall, OptionRejectAlways, ScopeProject, Grant{Tool: "edit_file", Pattern: "/p/src/a.go", Scope: ScopeProject}},
		{"reject always two paths", editTwo, OptionRejectAlways, ScopeSession, Grant{Tool: "rename_path", Pattern: "/p/src/**", Scope: ScopeSession}},
		{"allow command", testCall, OptionAllowAlways, ScopeProject, Grant{Tool: "run_program", Pattern: "go test ./...", Allow: true, Scope: ScopeProject}},
		{"reject command", rmCall, OptionRejectAlways, ScopeProject, Grant{Tool: "run_program", Pattern: "rm -rf build", Scope: ScopeProject}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := GrantFor(c.call, c.option, c.scope)
			if got != c.want {
				t.Fatalf("GrantFor = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestGrantRoundTrip(t *testing.T) {
	// The grant an answer creates must decide the same call (and its extensions) the same way
	// next time, and a glob-special file name must match only itself.
	odd := Call{Tool: "edit_file", Effect: tools.EffectWrite, Paths: []string{"/p/a[1]*.go"}}
	g := GrantFor(odd, OptionRejectAlways, ScopeProject)
	if Decide(ModeAuto, []Grant{g}, odd) != Deny {
		t.Fatal("reject_always grant does not deny its own call")
	}
	other := Call{Tool: "edit_file", Effect: tools.EffectWrite, Paths: []string{"/p/a1x.go"}}
	if Decide(ModeAuto, []Grant{g}, other) != Allow {
		t.Fatal("escaped glob matched another file")
	}
	g = GrantFor(testCall, OptionAllowSession, ScopeSession)
	longer := testCall
	longer.Command = append(append([]string(nil), testCall.Command...), "-run", "X")
	if Decide(ModeAsk, []Grant{g}, longer) != Allow {
		t.Fatal("command grant does not cover an extension of the command")
	}
}
