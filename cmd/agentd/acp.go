package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// runACP is `agentd acp`: the ACP door (agentclientprotocol.com, v1) on stdin and stdout, one JSON
// message per line, for Zed, the JetBrains IDEs, CodeCompanion and every other ACP client. It is
// the same engine, sessions, tools and providers as the LSP door; settings come from the user file
// and the project file (ACP has no initializationOptions).
func runACP(args []string, stderr io.Writer) int {
	fl := flag.NewFlagSet("agentd acp", flag.ContinueOnError)
	fl.SetOutput(stderr)
	logFile := fl.String("log-file", "", "write logs to `FILE` instead of stderr")
	logLevel := fl.String("log-level", "", "log level: debug, info, warn or error (default $AGENTD_LOG, else info)")
	trace := fl.String("trace", "", "write a JSONL agent trace of every run to `FILE`")
	fl.Usage = func() {
		fmt.Fprint(stderr, "usage: agentd acp [flags]\n\nServes the Agent Client Protocol (v1) on stdin/stdout for ACP clients.\n\nflags:\n")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "agentd acp: unexpected argument %q\n", fl.Arg(0))
		return 2
	}
	return serveLogged(stderr, *logFile, *logLevel, *trace, true)
}
