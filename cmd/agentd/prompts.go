package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/session"
	"github.com/agentd-dev/agentd/tools"
)

const promptsUsage = `usage:
  agentd prompts export DIR   write the built-in prompt config into DIR (new files only)
  agentd prompts check DIR    load DIR/agent.yml and its includes strictly and render every text

A set in $XDG_CONFIG_HOME/agentd/prompts/ (an agent.yml and the files it includes) replaces the
built-in one whole; docs/prompts.md explains the files.
`

// runPrompts is `agentd prompts export|check DIR`.
func runPrompts(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("agentd prompts", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() { fmt.Fprint(stderr, promptsUsage) }
	if err := fl.Parse(args); err != nil {
		return exitUsage
	}
	if fl.NArg() != 2 {
		fl.Usage()
		return exitUsage
	}
	dir := fl.Arg(1)
	switch fl.Arg(0) {
	case "export":
		wrote, err := prompts.Export(dir)
		for _, p := range wrote {
			fmt.Fprintln(stdout, p)
		}
		if err != nil {
			fmt.Fprintf(stderr, "agentd prompts export: %v\n", err)
			return 1
		}
		return 0
	case "check":
		if _, err := prompts.LoadDir(dir, session.Catalog(tools.Default())); err != nil {
			fmt.Fprintf(stderr, "agentd prompts check: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: the prompt config loads and every text renders\n", dir)
		return 0
	}
	fmt.Fprintf(stderr, "agentd prompts: unknown command %q\n", fl.Arg(0))
	fl.Usage()
	return exitUsage
}

// activePrompts is the user's prompt config when $XDG_CONFIG_HOME/agentd/prompts/agent.yml
// exists (checked against the real tools now, so a broken set stops start-up), else nil: the
// built-in set, which the session loads on first use.
func activePrompts() (*prompts.Set, error) {
	if !prompts.UserSetExists() {
		return nil, nil
	}
	return prompts.LoadDir(prompts.UserDir(), session.Catalog(tools.Default()))
}
