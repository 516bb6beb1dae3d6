package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Command is a server's prompt offered as the slash command /SERVER.PROMPT.
type Command struct {
	Name        string // SERVER.PROMPT, cleaned
	Description string
	Hint        string // the prompt's arguments, in order
	sv          *server
	prompt      *sdk.Prompt
}

// validCommand reports whether name is SERVER.PROMPT with both halves valid tool names (no
// package-level regexp, for start-up's sake, as validToolName).
func validCommand(name string) bool {
	server, prompt, ok := strings.Cut(name, ".")
	return ok && validToolName(server) && validToolName(prompt)
}

// Commands lists the prompts of the servers that are ready, in server then listing order. A
// prompt whose name would not make a clean command is left out.
func (s *Set) Commands() []Command {
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	var out []Command
	for _, sv := range servers {
		sv.mu.Lock()
		prompts, ready := sv.prompts, sv.state == StateReady
		sv.mu.Unlock()
		if !ready {
			continue
		}
		for _, p := range prompts {
			name := qualify(sv.cfg.Name) + "." + p.Name
			if !validCommand(name) {
				continue
			}
			var hint []string
			for _, a := range p.Arguments {
				hint = append(hint, Clean(a.Name, 32))
			}
			out = append(out, Command{Name: name, Description: Clean(p.Description, MaxDescription), Hint: strings.Join(hint, " "), sv: sv, prompt: p})
		}
	}
	return out
}

// Ready is closed once every server the set was opened with has finished starting (or failed).
func (s *Set) Ready() <-chan struct{} {
	s.mu.Lock()
	servers := s.servers
	s.mu.Unlock()
	ch := make(chan struct{})
	go func() {
		for _, sv := range servers {
			sv.mu.Lock()
			ready := sv.ready
			sv.mu.Unlock()
			<-ready
		}
		close(ch)
	}()
	return ch
}

// Expand runs /SERVER.PROMPT with text as its arguments (one argument takes all of it; several
// take a word each, the last one the rest) and returns the prompt's messages as the text of the
// user's message. ok is false when text names no command of the set.
func (s *Set) Expand(ctx context.Context, text string) (expanded string, ok bool, err error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") {
		return "", false, nil
	}
	name, rest, _ := strings.Cut(text[1:], " ")
	var cmd *Command
	for _, c := range s.Commands() {
		if c.Name == name {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		return "", false, nil
	}
	args := map[string]string{}
	rest = strings.TrimSpace(rest)
	for i, a := range cmd.prompt.Arguments {
		if a == nil {
			continue
		}
		if i == len(cmd.prompt.Arguments)-1 {
			args[a.Name] = rest
			break
		}
		var w string
		w, rest, _ = strings.Cut(rest, " ")
		args[a.Name] = w
		rest = strings.TrimSpace(rest)
	}
	cmd.sv.mu.Lock()
	cs := cmd.sv.cs
	cmd.sv.mu.Unlock()
	if cs == nil {
		return "", true, fmt.Errorf("the MCP server %s is not running", Clean(cmd.sv.cfg.Name, maxLabel))
	}
	cctx, cancel := context.WithTimeout(ctx, cmd.sv.cfg.Timeout)
	defer cancel()
	res, err := cs.GetPrompt(cctx, &sdk.GetPromptParams{Name: cmd.prompt.Name, Arguments: args})
	if err != nil {
		return "", true, fmt.Errorf("the MCP server %s failed the prompt %s: %s", Clean(cmd.sv.cfg.Name, maxLabel), cmd.Name, Clean(err.Error(), 500))
	}
	var parts []string
	for _, m := range res.Messages {
		if m == nil || m.Content == nil {
			continue
		}
		conv := convert("", &sdk.CallToolResult{Content: []sdk.Content{m.Content}})
		if !conv.IsError {
			parts = append(parts, conv.Output)
		}
	}
	return strings.Join(parts, "\n\n"), true, nil
}
