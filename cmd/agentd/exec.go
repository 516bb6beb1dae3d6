package main

// `agentd exec` runs one turn headless on a directory: the same session manager as the daemon,
// the disk workspace instead of the editor, and the terminal client of internal/term, which
// streams the transcript (or NDJSON with --json) and asks permission on the terminal.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/cmd/agentd/internal/term"
	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/replay"
	"github.com/agentd-dev/agentd/rpc"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

const execUsage = `usage: agentd exec [flags] PROMPT
       agentd exec --demo [flags]

Runs one agent turn on a directory without an editor, reading and editing files on disk.
Permission prompts are asked on the terminal and answered with an option's number (anything
else asks again; end of input refuses); when stdin is not a terminal they are denied unless
--mode auto. Text from the model or a server is shown with terminal controls escaped (\x1b,
\u202e, \n) and commands shell-quoted. Exit status 0 when the turn ends normally (end_turn).

--demo copies the bundled demo project (testdata/demo) to a temporary directory and runs a whole
turn on it; with no API key configured it uses the recorded replay provider, so nothing leaves
the machine and the repository is never modified.

flags:
`

// Exit codes of agentd exec.
const (
	exitOK        = 0
	exitFailed    = 1 // the provider failed, or setup failed
	exitUsage     = 2
	exitStopped   = 3 // the turn ended otherwise: max_tokens, max_turn_requests, refusal
	exitCancelled = 130
)

func runExec(args []string) int {
	return execMain(args, os.Stdin, os.Stdout, os.Stderr)
}

func execMain(args []string, stdin, stdout *os.File, stderr io.Writer) int {
	fl := flag.NewFlagSet("agentd exec", flag.ContinueOnError)
	fl.SetOutput(stderr)
	mode := fl.String("mode", "", "permission mode for this run: ask, auto or plan (default: the project's mode, else ask)")
	jsonOut := fl.Bool("json", false, "write NDJSON events (session updates, permission requests, the result) to stdout")
	cwd := fl.String("cwd", "", "directory to work in (default: the current directory)")
	trace := fl.String("trace", "", "write a JSONL agent trace of the run to `FILE`")
	providerID := fl.String("provider", "", "providerId from the settings (default: the settings' provider)")
	script := fl.String("replay", "", "play the model's side from a replay `SCRIPT` instead of calling a provider")
	demo := fl.Bool("demo", false, "run the bundled demo on a temporary copy of testdata/demo")
	demoDir := fl.String("demo-dir", "", "where the demo lives (default: testdata/demo found from the current directory up)")
	fl.Usage = func() {
		fmt.Fprint(stderr, execUsage)
		fl.PrintDefaults()
	}
	// Flags may come before or after the prompt's words: `agentd exec "fix it" --mode auto`.
	var words []string
	for rest := args; ; {
		if err := fl.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK
			}
			return exitUsage
		}
		rest = fl.Args()
		if len(rest) == 0 {
			break
		}
		words, rest = append(words, rest[0]), rest[1:]
	}
	if *mode != "" && !config.ValidMode(*mode) {
		fmt.Fprintf(stderr, "agentd exec: --mode %q is not one of %s\n", *mode, strings.Join(config.Modes, ", "))
		return exitUsage
	}
	prompt := strings.TrimSpace(strings.Join(words, " "))

	store, reg := newSettings()
	if err := store.LoadFile(config.LayerUser, config.UserConfigPath()); err != nil {
		printErr(stderr, "agentd exec", err)
		return exitFailed
	}

	out := term.New(term.Options{
		Out:   stdout,
		Err:   stderr,
		In:    stdin,
		Ask:   term.IsTerminal(stdin),
		Color: term.IsTerminal(stdout) && os.Getenv("NO_COLOR") == "",
		JSON:  *jsonOut,
	})
	if *demo {
		dir, err := findDemo(*demoDir)
		if err != nil {
			printErr(stderr, "agentd exec --demo", err)
			return exitFailed
		}
		tmp, err := os.MkdirTemp("", "agentd-demo-")
		if err != nil {
			printErr(stderr, "agentd exec --demo", err)
			return exitFailed
		}
		if err := os.CopyFS(tmp, os.DirFS(filepath.Join(dir, "project"))); err != nil {
			printErr(stderr, "agentd exec --demo", err)
			return exitFailed
		}
		*cwd = tmp
		// Said last, whatever happened, so the path is on screen when the run is over.
		defer out.Info("The demo's copy is in %s: look at stats.go there, or run `go test ./...` in it. Delete it when you are done.", tmp)
		if prompt == "" {
			b, err := os.ReadFile(filepath.Join(dir, "prompt.txt"))
			if err != nil {
				printErr(stderr, "agentd exec --demo", err)
				return exitFailed
			}
			prompt = strings.TrimSpace(string(b))
		}
		out.Info("Demo project copied to %s (the repository is not touched).", tmp)
		if *script == "" && *providerID == "" {
			if id := demoProvider(store); id != "" {
				*providerID = id
				out.Info("Using the configured provider %q.", id)
			} else {
				*script = filepath.Join(dir, "replay.json")
				out.Info("No API key configured: the model's side is replayed from %s.", *script)
			}
		}
	}
	if prompt == "" {
		fl.Usage()
		return exitUsage
	}
	if *cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			printErr(stderr, "agentd exec", err)
			return exitFailed
		}
		*cwd = wd
	}
	abs, err := filepath.Abs(*cwd)
	if err != nil {
		printErr(stderr, "agentd exec", err)
		return exitFailed
	}
	if err := store.LoadFile(config.LayerProject, config.ProjectConfigPath(abs)); err != nil {
		printErr(stderr, "agentd exec", err)
		return exitFailed
	}
	flags := map[string]any{}
	if *trace != "" {
		flags["trace"] = *trace
	}
	if *providerID != "" {
		flags["provider"] = *providerID
	}
	scriptPath := ""
	if *script != "" {
		// The script path stays out of the settings, whose baseUrl must be a network URL.
		scriptPath, _ = filepath.Abs(*script)
		flags["provider"] = "replay"
		flags["providers"] = map[string]any{"replay": map[string]any{"apiType": replay.APIType, "model": "replay"}}
	}
	if len(flags) > 0 {
		b, _ := json.Marshal(flags)
		if err := store.Set(config.LayerFlags, b); err != nil {
			printErr(stderr, "agentd exec", err)
			return exitUsage
		}
	}

	texts, err := activePrompts()
	if err != nil {
		printErr(stderr, "agentd exec", err)
		return exitUsage
	}
	src := &execProviders{rpc: &rpc.ProviderSource{Settings: store, Registry: reg, Secrets: rpc.DefaultSecretStore()}, store: store, reg: reg, script: scriptPath}
	m := session.NewManager(session.Deps{
		Client:      out,
		Workspaces:  func(_ string, r *workspace.Roots) workspace.Workspace { return workspace.NewDisk(r.Dirs()...) },
		Providers:   src,
		Tools:       tools.Default(),
		Prompts:     texts,
		Settings:    store.Get,
		StateDir:    config.StateDir(),
		Logger:      zap.NewNop(),
		NoTitles:    true,
		KeyEnvNames: reg.KeyEnvNames,
	})
	defer m.Shutdown(context.Background())

	params := protocol.SessionNewParams{Cwd: abs}
	if *mode != "" {
		params.Meta = protocol.Meta{"agentd/mode": *mode}
	}
	ns, err := m.New(context.Background(), params)
	if err != nil {
		printErr(stderr, "agentd exec", err)
		return exitFailed
	}
	out.Start(abs, ns.Modes.CurrentModeID, prompt)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer func() {
		signal.Stop(sigs) // no delivery after this returns, so closing is safe
		close(sigs)       // and ends the watcher below
	}()
	go func() {
		n := 0
		for range sigs {
			n++
			if n > 1 {
				tools.KillLeftovers() // os.Exit skips main's
				os.Exit(exitCancelled)
			}
			out.Info("Cancelling… (press Ctrl-C again to quit at once)")
			m.Cancel(ns.SessionID)
		}
	}()

	res, err := m.Prompt(ctx, protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock(prompt)}})
	if err != nil {
		printErr(stderr, "agentd exec", err)
		return exitFailed
	}
	out.Result(res)
	switch {
	case res.Meta["agentd/error"] != nil:
		return exitFailed
	case res.StopReason == protocol.StopEndTurn:
		return exitOK
	case res.StopReason == protocol.StopCancelled:
		return exitCancelled
	}
	return exitStopped
}

// printErr prints err on w. Its text may quote a settings file or a server, so each of its lines
// is escaped, and lines after the first are indented under it.
func printErr(w io.Writer, prefix string, err error) {
	lines := strings.Split(strings.TrimRight(err.Error(), "\n"), "\n")
	fmt.Fprintf(w, "%s: %s\n", prefix, term.Escape(lines[0]))
	for _, l := range lines[1:] {
		fmt.Fprintf(w, "  %s\n", term.Escape(l))
	}
}

// execProviders resolves providers like the daemon does, except replay scripts, whose baseUrl is
// a file rather than a network endpoint.
type execProviders struct {
	rpc    *rpc.ProviderSource
	store  *config.Store
	reg    *providers.Registry
	script string // --replay / the demo's script, used for a replay provider without a baseUrl
}

func (p *execProviders) Provider(ctx context.Context, id string) (providers.Provider, providers.Config, error) {
	st := p.store.Get()
	if id == "" {
		id = st.Provider
	}
	if ps, ok := st.Providers[id]; ok && ps.APIType == replay.APIType {
		cfg := providers.Config{ID: id, APIType: ps.APIType, BaseURL: ps.BaseURL, Model: ps.Model}
		if cfg.BaseURL == "" {
			cfg.BaseURL = p.script
		}
		prov, err := p.reg.New(cfg)
		return prov, cfg, err
	}
	return p.rpc.Provider(ctx, id)
}

// demoProvider picks the provider the demo talks to: the default one when it has a key or needs
// none (a local server such as Ollama), else the first remote one with a key; "" means none.
func demoProvider(store *config.Store) string {
	st := store.Get()
	src := &rpc.ProviderSource{Settings: store, Registry: newRegistry(), Secrets: rpc.DefaultSecretStore()}
	infos := src.List(context.Background())
	for _, info := range infos {
		if info.ProviderID == st.Provider && (info.KeyStatus == protocol.KeySet || info.KeyStatus == protocol.KeyNotNeeded || info.APIType == replay.APIType) {
			return info.ProviderID
		}
	}
	for _, info := range infos {
		// A local server is only used when it is the default: it may not be running.
		if ep, err := providers.CheckEndpoint(info.BaseURL); err == nil && !ep.Local && info.KeyStatus == protocol.KeySet {
			return info.ProviderID
		}
	}
	return ""
}

// findDemo locates testdata/demo: the flag, else from the current directory up.
func findDemo(flagDir string) (string, error) {
	if flagDir != "" {
		if _, err := os.Stat(filepath.Join(flagDir, "replay.json")); err != nil {
			return "", fmt.Errorf("--demo-dir %s: %w", flagDir, err)
		}
		return flagDir, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		cand := filepath.Join(dir, "testdata", "demo")
		if _, err := os.Stat(filepath.Join(cand, "replay.json")); err == nil {
			return cand, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testdata/demo not found from the current directory up; run from the agentd repository or pass --demo-dir")
		}
		dir = parent
	}
}
