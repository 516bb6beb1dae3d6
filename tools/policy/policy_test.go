package policy

import (
	"strings"
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
	allowGoTest := Grant{Tool: "run_program", Command: []string{"go", "test"}, Allow: true, Scope: ScopeProject}
	denyRm := Grant{Tool: "run_program", Command: []string{"rm"}, Allow: false, Scope: ScopeProject}
	allowSrc := Grant{Tool: "*", Pattern: "/p/src/**", Allow: true, Scope: ScopeSession}
	denySub := Grant{Tool: "rename_path", Pattern: "/p/src/sub/**", Allow: false, Scope: ScopeSession}
	allowGoAny := Grant{Tool: "", Command: []string{"go"}, Allow: true, Scope: ScopeSession}

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
		{"command allow covers only its argv", ModeAsk, []Grant{allowGoTest}, testCall, Ask},
		{"command allow covers its argv", ModeAsk, []Grant{{Tool: "run_program", Command: []string{"go", "test", "./..."}, Allow: true}}, testCall, Allow},
		{"command reject covers extensions", ModeAsk, []Grant{{Tool: "run_program", Command: []string{"go", "test"}}}, testCall, Deny},
		{"command prefix is word-wise", ModeAsk, []Grant{{Tool: "run_program", Command: []string{"go", "tes"}, Allow: true}}, testCall, Ask},
		{"command prefix other command", ModeAsk, []Grant{allowGoTest}, rmCall, Ask},
		{"command prefix longer than argv", ModeAsk, []Grant{{Tool: "run_program", Command: []string{"go", "test", "./...", "-v"}, Allow: true}}, testCall, Ask},
		{"command grant on empty argv", ModeAsk, []Grant{allowGoTest}, emptyCall, Ask},
		{"reject_always denies in ask", ModeAsk, []Grant{denyRm}, rmCall, Deny},
		{"reject_always denies in auto", ModeAuto, []Grant{denyRm}, rmCall, Deny},
		{"reject beats allow", ModeAsk, []Grant{{Tool: "run_program", Allow: true}, denyRm}, rmCall, Deny},
		{"path glob covers all paths", ModeAsk, []Grant{allowSrc}, editTwo, Allow},
		{"path glob must cover every path", ModeAsk, []Grant{{Tool: "*", Pattern: "/p/src/*.go", Allow: true}}, editTwo, Ask},
		{"path glob reject on any path", ModeAuto, []Grant{denySub}, editTwo, Deny},
		{"path glob never matches exec", ModeAsk, []Grant{allowSrc}, testCall, Ask},
		{"any-tool command allow is exact", ModeAsk, []Grant{allowGoAny}, addDepGo, Ask},
		{"any-tool command allow", ModeAsk, []Grant{{Command: addDepGo.Command, Allow: true}}, addDepGo, Allow},
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
		{"allow command", testCall, OptionAllowAlways, ScopeProject, Grant{Tool: "run_program", Command: []string{"go", "test", "./..."}, Allow: true, Scope: ScopeProject}},
		{"reject command", rmCall, OptionRejectAlways, ScopeProject, Grant{Tool: "run_program", Command: []string{"rm", "-rf", "build"}, Scope: ScopeProject}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := GrantFor(c.call, c.option, c.scope)
			if !got.Equal(c.want) {
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
	if Decide(ModeAsk, []Grant{g}, testCall) != Allow {
		t.Fatal("command grant does not cover its own command")
	}
	longer := testCall
	longer.Command = append(append([]string(nil), testCall.Command...), "-run", "X")
	if Decide(ModeAsk, []Grant{g}, longer) != Ask {
		t.Fatal("command allow covers arguments it did not show")
	}
	g = GrantFor(rmCall, OptionRejectAlways, ScopeProject)
	longer = rmCall
	longer.Command = append(append([]string(nil), rmCall.Command...), "/")
	if Decide(ModeAuto, []Grant{g}, longer) != Deny {
		t.Fatal("command reject does not cover an extension of the command")
	}
}

// A path the user rejected for good stays rejected whichever write tool names it next: the
// model must not get around "Always reject" on edit_file with create_file overwrite or delete_path.
func TestRejectCoversEveryWriteTool(t *testing.T) {
	edit := Call{Tool: "edit_file", Effect: tools.EffectWrite, Paths: []string{"/p/guarded.txt"}}
	g := GrantFor(edit, OptionRejectAlways, ScopeProject)
	for _, tool := range []string{"edit_file", "create_file", "delete_path", "rename_path", "move_path", "some_new_write_tool"} {
		call := Call{Tool: tool, Effect: tools.EffectWrite, Paths: []string{"/p/guarded.txt"}}
		if tool == "rename_path" || tool == "move_path" {
			call.Paths = []string{"/p/other.txt", "/p/guarded.txt"}
		}
		if got := Decide(ModeAuto, []Grant{g}, call); got != Deny {
			t.Errorf("%s of the rejected path: Decide = %v, want deny", tool, got)
		}
	}
	// It stays a rule about that path: other files, and programs, are not covered.
	if got := Decide(ModeAuto, []Grant{g}, Call{Tool: "create_file", Effect: tools.EffectWrite, Paths: []string{"/p/free.txt"}}); got != Allow {
		t.Errorf("another path: Decide = %v, want allow", got)
	}
	if got := Decide(ModeAuto, []Grant{g}, Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"/p/guarded.txt"}}); got != Allow {
		t.Errorf("a program: Decide = %v, want allow", got)
	}
	// An allow stays the tool's own.
	allow := GrantFor(edit, OptionAllowAlways, ScopeProject)
	if got := Decide(ModeAsk, []Grant{allow}, Call{Tool: "delete_path", Effect: tools.EffectWrite, Paths: []string{"/p/a.txt"}}); got != Ask {
		t.Errorf("allow for edit_file covered delete_path: %v", got)
	}
}

// An exec grant is the argv as a list: words that contain spaces, or a command split
// differently, are another command.
func TestCommandGrantComparesArgv(t *testing.T) {
	granted := Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"sh", "-c", "make test"}}
	g := GrantFor(granted, OptionAllowAlways, ScopeProject)
	for _, argv := range [][]string{
		{"sh", "-c", "make", "test"},
		{"sh", "-c", "make test; rm -rf ~"},
		{"sh -c", "make test"},
	} {
		if got := Decide(ModeAsk, []Grant{g}, Call{Tool: "run_program", Effect: tools.EffectExec, Command: argv}); got != Ask {
			t.Errorf("grant for %q covered %q: %v", granted.Command, argv, got)
		}
	}
	if got := Decide(ModeAsk, []Grant{g}, granted); got != Allow {
		t.Errorf("grant does not cover its own command: %v", got)
	}
	if got := Decide(ModeAsk, []Grant{g}, Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"sh", "-c", "make test", "arg0"}}); got != Ask {
		t.Errorf("an allow covers an argument it did not show: %v", got)
	}
}

// Grants persisted before commands were lists have the command line in Pattern. An old allow is
// not trusted to mean the same argv (it asks again); an old reject still refuses.
func TestLegacyCommandPattern(t *testing.T) {
	allow := Grant{Tool: "run_program", Pattern: "go test", Allow: true, Scope: ScopeProject}
	if got := Decide(ModeAsk, []Grant{allow}, testCall); got != Ask {
		t.Errorf("legacy allow: %v, want ask", got)
	}
	deny := Grant{Tool: "run_program", Pattern: "rm -rf", Scope: ScopeProject}
	if got := Decide(ModeAuto, []Grant{deny}, rmCall); got != Deny {
		t.Errorf("legacy reject: %v, want deny", got)
	}
}

// TestFetchAsksInAskAndPlanMode: a fetch changes nothing in the project but can carry its data
// off the machine: it asks in ask mode and in plan mode (research is part of planning), runs in
// auto mode, and a remembered answer for the tool holds.
func TestFetchAsksInAskAndPlanMode(t *testing.T) {
	call := Call{Tool: "web_fetch", Effect: tools.EffectFetch}
	for mode, want := range map[Mode]Decision{ModeAsk: Ask, ModePlan: Ask, ModeAuto: Allow} {
		if got := Decide(mode, nil, call); got != want {
			t.Errorf("%s: %s, want %s", mode, got, want)
		}
	}
	allow := GrantFor(call, OptionAllowSession, "")
	if got := Decide(ModeAsk, []Grant{allow}, call); got != Allow {
		t.Errorf("with an allow grant: %s", got)
	}
	reject := GrantFor(call, OptionRejectAlways, "")
	if got := Decide(ModeAuto, []Grant{reject}, call); got != Deny {
		t.Errorf("auto with a reject grant: %s", got)
	}
	if got := Decide(ModePlan, nil, Call{Tool: "edit_file", Effect: tools.EffectWrite}); got != PlanRefuse {
		t.Errorf("plan mode no longer refuses a write: %s", got)
	}
}

// TestFetchGrantsAreKeyedByHost: allowing a fetch of one site does not allow the model to send
// the next request, with whatever it puts in the URL, to any other site; rejecting one site
// rejects only that site. A grant saved before hosts were recorded still covers the whole tool.
func TestFetchGrantsAreKeyedByHost(t *testing.T) {
	docs := Call{Tool: "web_fetch", Effect: tools.EffectFetch, Host: "pkg.go.dev"}
	evil := Call{Tool: "web_fetch", Effect: tools.EffectFetch, Host: "attacker.example"}
	allow := GrantFor(docs, OptionAllowAlways, ScopeProject)
	if want := (Grant{Tool: "web_fetch", Host: "pkg.go.dev", Allow: true, Scope: ScopeProject}); !allow.Equal(want) {
		t.Fatalf("GrantFor = %+v, want %+v", allow, want)
	}
	if got := Decide(ModeAsk, []Grant{allow}, docs); got != Allow {
		t.Errorf("the allowed host: %s", got)
	}
	if got := Decide(ModeAsk, []Grant{allow}, evil); got != Ask {
		t.Errorf("another host under the first host's grant: %s, want ask", got)
	}
	// A host grant never covers a write, a program or another fetch tool's call without a host.
	for _, c := range []Call{{Tool: "web_fetch", Effect: tools.EffectWrite, Paths: []string{"/p/x"}}, {Tool: "web_fetch", Effect: tools.EffectFetch}} {
		if got := Decide(ModeAsk, []Grant{allow}, c); got != Ask {
			t.Errorf("%+v: %s, want ask", c, got)
		}
	}
	reject := GrantFor(evil, OptionRejectAlways, ScopeProject)
	if got := Decide(ModeAuto, []Grant{reject, allow}, evil); got != Deny {
		t.Errorf("the rejected host in auto mode: %s", got)
	}
	if got := Decide(ModeAuto, []Grant{reject}, docs); got != Allow {
		t.Errorf("another host under a reject of the first: %s", got)
	}
	legacy := Grant{Tool: "web_fetch", Allow: true, Scope: ScopeProject}
	if got := Decide(ModeAsk, []Grant{legacy}, evil); got != Allow {
		t.Errorf("a saved whole-tool grant: %s", got)
	}
}

// An allow for a program covers the call the user was shown: the same argv, the same variables
// and the same input. Each call here would run something else than the granted one.
func TestExecAllowCoversOnlyItsArgvEnvAndStdin(t *testing.T) {
	status := Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"git", "status"}}
	for _, scope := range []struct {
		option string
		scope  Scope
	}{{OptionAllowSession, ScopeSession}, {OptionAllowAlways, ScopeProject}} {
		g := GrantFor(status, scope.option, scope.scope)
		if got := Decide(ModeAsk, []Grant{g}, status); got != Allow {
			t.Fatalf("%s: the plain grant does not cover the plain call: %v", scope.option, got)
		}
		for _, env := range []map[string]string{
			{"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "/tmp/evil"},
			{"GOFLAGS": "-toolexec=/tmp/evil"},
			{"LD_PRELOAD": "/tmp/evil.so"},
			{"NODE_OPTIONS": "--require /tmp/evil.js"},
		} {
			c := status
			c.Env = env
			if got := Decide(ModeAsk, []Grant{g}, c); got != Ask {
				t.Errorf("%s for git status covered it with %v: %v", scope.option, env, got)
			}
		}
		c := status
		c.Stdin = "anything"
		if got := Decide(ModeAsk, []Grant{g}, c); got != Ask {
			t.Errorf("%s for git status (no input) covered it with an input: %v", scope.option, got)
		}
	}

	// A grant made with variables covers exactly those.
	withEnv := status
	withEnv.Env = map[string]string{"GIT_PAGER": "cat"}
	g := GrantFor(withEnv, OptionAllowSession, ScopeSession)
	for _, c := range []struct {
		env  map[string]string
		want Decision
	}{
		{map[string]string{"GIT_PAGER": "cat"}, Allow},
		{nil, Ask},
		{map[string]string{"GIT_PAGER": "less"}, Ask},
		{map[string]string{"GIT_PAGER": "cat", "LD_PRELOAD": "/tmp/evil.so"}, Ask},
	} {
		call := status
		call.Env = c.env
		if got := Decide(ModeAsk, []Grant{g}, call); got != c.want {
			t.Errorf("grant with %v, call with %v: %v, want %v", withEnv.Env, c.env, got, c.want)
		}
	}

	// `python3 -` granted once with input A does not run input B.
	py := Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"python3", "-"}, Stdin: "print('A')\n"}
	g = GrantFor(py, OptionAllowSession, ScopeSession)
	if g.Stdin == "" || strings.Contains(g.Stdin, "print") {
		t.Fatalf("grant keeps the input as %q, want its digest", g.Stdin)
	}
	if got := Decide(ModeAsk, []Grant{g}, py); got != Allow {
		t.Errorf("the same input: %v", got)
	}
	for _, stdin := range []string{"print('B')\n", "", "print('A')\nimport os\n"} {
		c := py
		c.Stdin = stdin
		if got := Decide(ModeAsk, []Grant{g}, c); got != Ask {
			t.Errorf("python3 - granted with input A covered input %q: %v", stdin, got)
		}
	}

	// An argument the user was not shown can write anywhere.
	log := Call{Tool: "run_program", Effect: tools.EffectExec, Command: []string{"git", "log", "-1"}}
	g = GrantFor(log, OptionAllowAlways, ScopeProject)
	c := log
	c.Command = []string{"git", "log", "-1", "--output=/outside"}
	if got := Decide(ModeAsk, []Grant{g}, c); got != Ask {
		t.Errorf("git log -1 covered git log -1 --output=/outside: %v", got)
	}

	// A reject refuses the command whatever its variables and input.
	rej := GrantFor(withEnv, OptionRejectAlways, ScopeProject)
	c = status
	c.Stdin = "x"
	if got := Decide(ModeAuto, []Grant{rej}, c); got != Deny {
		t.Errorf("reject of git status with variables does not refuse it without: %v", got)
	}
}
