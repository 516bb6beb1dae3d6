// Command agentd is the agent daemon an editor starts over stdio. With no subcommand (or
// `serve`, or --stdio, which VS Code's LanguageClient appends) it speaks the protocol on stdin
// and stdout; `agentd exec` runs one turn headless. Logs go to stderr or --log-file, never to
// stdout, which carries nothing but protocol frames.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers/keys"
	"github.com/agentd-dev/agentd/rpc"
	"github.com/agentd-dev/agentd/sandbox"
	"github.com/agentd-dev/agentd/tools"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise the module version.
var version = "dev"

// agentdVersion is worked out once: debug.ReadBuildInfo parses the embedded module list on every
// call, and serving asks twice before it answers initialize.
var agentdVersion = sync.OnceValue(func() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
})

const usage = `agentd: an LLM coding agent that lives beside your editor.

usage:
  agentd [serve] [flags]      serve the protocol on stdin/stdout (what an editor runs)
  agentd acp [flags]          serve ACP v1 on stdin/stdout (Zed, JetBrains, CodeCompanion, …)
  agentd exec [flags] PROMPT  run one turn on a directory without an editor (agentd exec -h)
  agentd key set|get|rm URL   store, check or forget an API key for URL's origin (agentd key -h)
  agentd prompts export|check DIR   write or check a prompt config (agentd prompts -h)
  agentd mcp list [-C DIR]    start your MCP servers and print their state and tools
  agentd mcp login|logout NAME   sign in to an HTTP MCP server (OAuth), or forget its tokens
  agentd mcp secret NAME      keep the client secret of a server's pre-registered OAuth client
  agentd doctor [-C DIR]      print what works here (sandbox, keyring, providers, MCP) and what to do
  agentd version              print the version

flags:
`

// main makes agentd a child subreaper where it can (Linux), so an orphan a program left behind
// becomes agentd's child, and kills what programs left running once run returns, whether input
// ended, the editor asked it to exit or SIGTERM/SIGINT arrived (run handles those and returns).
// Only here: tests call run in-process, and killing every child would reach theirs.
func main() {
	// The sandbox helper (package sandbox) is agentd started again by run_program: it
	// restricts itself and execs the program, and must do nothing else first.
	if ok, err := sandbox.RunHelper(os.Args); ok {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(126)
	}
	exe, _ := os.Executable() // "": the sandbox is unavailable and says so
	sandbox.SetHelper(exe)
	tools.BecomeSubreaper() // an error leaves orphans to init, as without it
	code := run(os.Args[1:], os.Stderr)
	tools.KillLeftovers()
	os.Exit(code)
}

func run(args []string, stderr io.Writer) int {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "serve":
			args = args[1:]
		case "exec":
			return runExec(args[1:])
		case "prompts":
			return runPrompts(args[1:], os.Stdout, stderr)
		case "acp":
			return runACP(args[1:], stderr)
		case "mcp":
			return runMCP(args[1:], os.Stdout, stderr)
		case "doctor":
			return runDoctor(args[1:], os.Stdout, stderr)
		case "key":
			return runKey(args[1:], os.Stdin, os.Stdout, stderr, keys.Default())
		case "version":
			args = []string{"--version"}
		case "help":
			args = []string{"--help"}
		default:
			fmt.Fprintf(stderr, "agentd: unknown command %q (try agentd --help)\n", args[0])
			return 2
		}
	}
	fl := flag.NewFlagSet("agentd", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Bool("stdio", true, "serve on stdin/stdout (the default; accepted because LSP clients append it)")
	fl.Int("clientProcessId", 0, "accepted because vscode-languageclient appends it for some transports; end of stdin ends agentd")
	showVersion := fl.Bool("version", false, "print the version and exit")
	logFile := fl.String("log-file", "", "write logs to `FILE` instead of stderr")
	logLevel := fl.String("log-level", "", "log level: debug, info, warn or error (default $AGENTD_LOG, else info)")
	trace := fl.String("trace", "", "write a JSONL agent trace of every run to `FILE`")
	fl.Usage = func() {
		fmt.Fprint(stderr, usage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		// stdout is fine here: no protocol is being spoken.
		fmt.Println("agentd", agentdVersion())
		return 0
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "agentd: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	terminalHint(os.Stdin, stderr)
	return serveLogged(stderr, *logFile, *logLevel, *trace, false)
}

// serveLogged starts logging (to file, else stderr; level from the flag, else $AGENTD_LOG) and
// serves one door on stdin and stdout until it ends.
func serveLogged(stderr io.Writer, logFile, logLevel, trace string, acp bool) int {
	if logLevel == "" {
		logLevel = os.Getenv("AGENTD_LOG")
	}
	log, closeLog, err := newLogger(stderr, logFile, logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "agentd: %v\n", err)
		return 2
	}
	defer closeLog()
	return serveStdio(log, trace, acp)
}

// serveStdio runs the daemon on the process's stdin and stdout: the LSP door, or with acp the
// ACP door.
func serveStdio(log *zap.Logger, trace string, acp bool) int {
	in, out := stdio()
	// Whatever writes to os.Stdout from now on (a stray print, a library) lands on stderr; only
	// the framer holds the real fd 1.
	os.Stdout = os.Stderr

	store, reg := newSettings()
	if err := store.LoadFile(config.LayerUser, config.UserConfigPath()); err != nil {
		// A user file that does not validate is a start-up error, printed once: running on
		// without it would silently use settings the user did not choose.
		fmt.Fprintf(os.Stderr, "agentd: %v\n", err)
		return 2
	}
	texts, err := activePrompts()
	if err != nil {
		// Never a half-rendered prompt: a user prompt config that does not load stops start-up.
		fmt.Fprintf(os.Stderr, "agentd: %v\n", err)
		return 2
	}
	if trace != "" {
		b, _ := jsonObject("trace", trace)
		if err := store.Set(config.LayerFlags, b); err != nil {
			fmt.Fprintf(os.Stderr, "agentd: --trace: %v\n", err)
			return 2
		}
	}

	srv := rpc.NewServer(rpc.Options{
		Version:        agentdVersion(),
		Logger:         log,
		Settings:       store,
		Registry:       reg,
		Tools:          tools.Default(),
		Prompts:        texts,
		StateDir:       config.StateDir(),
		Secrets:        keys.Default(),
		MCPTokens:      mcpTokens(),
		MCPClientIDURL: mcpClientIDURL(),
		ParentPoll:     3 * time.Second,
		ACP:            acp,
	})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log.Info("agentd serving on stdio", zap.String("version", agentdVersion()), zap.Int("pid", os.Getpid()))
	start := time.Now()
	code, err := srv.Serve(ctx, in, out)
	if err != nil {
		log.Error("session ended", zap.Error(err), zap.Duration("uptime", time.Since(start)))
		if code == 0 {
			code = 1
		}
	}
	log.Info("exit", zap.Int("code", code))
	return code
}
