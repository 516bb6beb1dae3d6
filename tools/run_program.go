package tools

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

type runProgramIn struct {
	Command        []string          `json:"command,omitempty" schema:"maxItems=1000"`
	Shell          string            `json:"shell,omitempty" schema:"maxLength=65536"`
	Cwd            string            `json:"cwd,omitempty" schema:"maxLength=4096"`
	Env            map[string]string `json:"env,omitempty"`
	Stdin          string            `json:"stdin,omitempty" schema:"maxLength=8388608"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" schema:"minimum=1,maximum=3600"`
	MaxOutputBytes int               `json:"max_output_bytes,omitempty" schema:"minimum=1000,maximum=1048576"`
	Sandbox        *bool             `json:"sandbox,omitempty"`
	Justification  string            `json:"justification,omitempty" schema:"maxLength=2000"`
	Background     bool              `json:"background,omitempty"`
}

func (in runProgramIn) title() string {
	if len(in.Command) > 0 {
		return "Run " + quoteArgv(in.Command)
	}
	if in.Shell != "" {
		return "Run " + in.Shell
	}
	return ""
}

// RunProgram is the run_program tool.
var RunProgram Tool = &typed[runProgramIn]{spec: Spec{Name: "run_program", Effect: EffectExec, Kind: "execute", Title: "Run program"}, run: runProgram}

func runProgram(ctx context.Context, env *Env, in runProgramIn) Result {
	var argv []string
	switch {
	case len(in.Command) > 0 && in.Shell != "":
		return Errorf("fields command and shell: give one of them, not both")
	case len(in.Command) > 0:
		if in.Command[0] == "" {
			return Errorf("field command[0] (the program) is empty")
		}
		for i, a := range in.Command {
			if strings.ContainsRune(a, 0) {
				return Errorf("field command[%d] contains a NUL byte", i)
			}
		}
		argv = in.Command
	case in.Shell != "":
		if !env.AllowShell {
			return Errorf("field shell: shell command lines are turned off in the user's settings; pass the program and its arguments as a list in command instead")
		}
		argv = shellCommand(in.Shell)
	default:
		return Errorf("missing required field command (the program and its arguments as a list)")
	}
	for k := range in.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return Errorf("field env: %q is not a valid variable name", k)
		}
	}
	box, bad := chooseSandbox(env, in.Sandbox, in.Justification)
	if bad != nil {
		return *bad
	}
	if in.Background {
		if env.Programs == nil {
			return Errorf("field background: background programs are not available here; run it without background")
		}
		box.background = true
	}
	return execTool(ctx, env, "cwd", in.Cwd, argv, in.Env, in.Stdin, in.TimeoutSeconds, in.MaxOutputBytes, box)
}

// execTool is the common path of the exec tools: contain the directory, ask with the exact
// command, save the session's edits, run, report.
func execTool(ctx context.Context, env *Env, cwdField, cwd string, argv []string, vars map[string]string, stdin string, timeoutSec, maxOut int, box sandboxChoice) Result {
	if cwd == "" {
		cwd = "."
	}
	dir, bad := resolve(env, cwdField, cwd, false)
	if bad != nil {
		return *bad
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return Errorf("field %s: %s is not an existing directory", cwdField, rel(env, dir))
	}
	if timeoutSec == 0 {
		timeoutSec = 60
	}
	if maxOut == 0 {
		maxOut = 30000
	}
	timeout := time.Duration(timeoutSec) * time.Second
	req := PermissionRequest{Title: runTitle(argv, vars, stdin), Kind: "execute", Paths: []string{dir}, Command: argv, Cwd: dir, Env: vars, Stdin: stdin}
	box.describe(&req)
	if r := permit(ctx, env, req); r != nil {
		return *r
	}
	note := ""
	if env.SaveBeforeExec != nil {
		note = env.SaveBeforeExec(ctx)
	}
	// The directory was contained before the permission was asked; a symlink swapped in since
	// would start the program outside the roots.
	if err := stillAt(env, dir, false); err != nil {
		return Errorf("field %s: %v. The program was not run", cwdField, err)
	}
	if box.background {
		r := startBackground(env, execSpec{Argv: argv, Dir: dir, Env: vars, Stdin: stdin, Box: box})
		r.Locations = []Location{{Path: dir}}
		box.report(&r)
		return r
	}
	res := runCommand(ctx, env, execSpec{Argv: argv, Dir: dir, Env: vars, Stdin: stdin, Timeout: timeout, MaxOutput: maxOut, Box: box})
	r := formatExec(env, argv, dir, res, timeout, note)
	box.report(&r)
	r.Locations = []Location{{Path: dir}}
	return r
}

// runTitle is the permission question's title for a program: the variables set for it in the
// shell's `NAME=value program args` form (sorted, quoted like argv), and the size of its input,
// so that a client that shows only the title still shows both.
func runTitle(argv []string, vars map[string]string, stdin string) string {
	var b strings.Builder
	b.WriteString("Run ")
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		if plainEnvName(k) {
			b.WriteString(k)
		} else {
			b.WriteString(quoteArgv([]string{k}))
		}
		b.WriteString("=" + quoteArgv([]string{vars[k]}) + " ")
	}
	b.WriteString(quoteArgv(argv))
	if stdin != "" {
		fmt.Fprintf(&b, " with stdin (%s, shown below)", plural(len(stdin), "byte"))
	}
	return b.String()
}

// plainEnvName reports whether k is a name the shell would read as an assignment unquoted.
func plainEnvName(k string) bool {
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return k != ""
}
