package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/mcp/mcpauth"
	"github.com/agentd-dev/agentd/tools"
)

// Caps of a result, like read_file's: the model reads at most maxResultLines lines and
// maxResultBytes bytes of one call, and at most maxImages images of up to maxImageBytes each
// (Anthropic's limit per image is 5 MB, OpenAI's 20 MB; Gemini's request 20 MB in all).
const (
	maxResultLines = 2000
	maxResultBytes = 64 << 10
	maxImages      = 4
	maxImageBytes  = 4 << 20
)

// modelImageType says whether every dialect's vision models read images of type mime (a switch,
// not a package-level map, which the init would build at every start).
func modelImageType(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// Tool is one contributed tool, bound to its server. Its effect is exec (it runs outside agentd's
// path containment, one call at a time); the session asks before every call.
type Tool struct {
	sv     *server
	name   string // the model's name (qualified on a collision)
	remote string // the server's name for it
	label  string // "SERVER: TOOL", cleaned
	desc   string
	schema json.RawMessage
	output any // the tool's outputSchema, checked against structured results (structured.go)
}

func newTool(sv *server, name string, t *sdk.Tool, schema json.RawMessage) *Tool {
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return &Tool{
		sv:     sv,
		name:   name,
		remote: t.Name,
		label:  Clean(sv.cfg.Name, maxLabel) + ": " + Clean(t.Name, maxLabel),
		desc:   Clean(fmt.Sprintf("(MCP server %s) %s", sv.cfg.Name, desc), MaxDescription),
		schema: schema,
		output: t.OutputSchema,
	}
}

func (t *Tool) key() key                     { return key{t.sv.cfg.Name, t.remote} }
func (t *Tool) Name() string                 { return t.name }
func (t *Tool) Description() string          { return t.desc }
func (t *Tool) Schema() json.RawMessage      { return t.schema }
func (t *Tool) Effect() tools.Effect         { return tools.EffectExec }
func (t *Tool) Kind() string                 { return "other" }
func (t *Tool) Title(json.RawMessage) string { return t.label }
func (t *Tool) Server() string               { return Clean(t.sv.cfg.Name, maxLabel) }
func (t *Tool) RemoteName() string           { return Clean(t.remote, maxLabel) }

// Run asks for permission, then calls the tool on its server, bounded by the server's timeout. A
// failure of the server is this call's error result, never the turn's.
func (t *Tool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) tools.Result {
	var in map[string]any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &in); err != nil {
			return tools.Errorf("Error: the arguments must be a JSON object: %v", err)
		}
	}
	if env.Permit != nil {
		if err := env.Permit(ctx, tools.PermissionRequest{Title: t.label, Kind: "other"}); err != nil {
			if tools.IsDenied(err) {
				return tools.Result{Output: err.Error(), IsError: true}
			}
			return tools.Errorf("Error: %v", err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, t.sv.cfg.Timeout)
	defer cancel()
	live := t.sv.live.begin(env)
	defer t.sv.live.end(live)
	res, err := t.sv.call(context.WithValue(cctx, callKey{}, live), t.remote, in)
	server := Clean(t.sv.cfg.Name, maxLabel)
	switch {
	case err != nil && ctx.Err() != nil:
		return tools.Errorf("The call was cancelled; the MCP server %s was told to stop it.", server)
	case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tools.Errorf("Error: the MCP server %s did not answer within %s, so the call was abandoned (it was told to stop).", server, t.sv.cfg.Timeout)
	case err != nil && mcpauth.IsNeedsSignIn(err):
		var ns *mcpauth.NeedsSignIn
		errors.As(err, &ns)
		return tools.Errorf("Error: the MCP server %s refused this call: %s. Tell the user; the call can be tried again once they have signed in.", server, Clean(ns.Error(), 500))
	case err != nil:
		return tools.Errorf("Error: the MCP server %s failed this call: %s. It is restarted at the next turn if it stopped.", server, Clean(err.Error(), 500))
	}
	if why := checkOutput(t.output, res); why != "" {
		return tools.Errorf("Error: the MCP server %s answered this call wrongly: %s.", server, why)
	}
	return convert(server, res)
}

// convert turns a call's result into the text the model reads.
func convert(server string, res *sdk.CallToolResult) tools.Result {
	var parts []string
	var images []tools.Image
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			mime := Clean(c.MIMEType, 64)
			switch {
			case !modelImageType(mime):
				parts = append(parts, fmt.Sprintf("[an image of type %s, which models do not read, was left out]", mime))
			case len(c.Data) > maxImageBytes:
				parts = append(parts, fmt.Sprintf("[an image (%s, %d bytes) over the %d MB limit was left out]", mime, len(c.Data), maxImageBytes>>20))
			case len(images) == maxImages:
				parts = append(parts, fmt.Sprintf("[an image (%s) past the first %d was left out]", mime, maxImages))
			default:
				images = append(images, tools.Image{MimeType: mime, Data: c.Data})
				parts = append(parts, fmt.Sprintf("[image %d of this result (%s) follows]", len(images), mime))
			}
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio (%s, %d bytes), not shown]", Clean(c.MIMEType, 64), len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", Clean(c.URI, 500), Clean(c.Name, maxTitle)))
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Text != "" || len(c.Resource.Blob) == 0 {
				parts = append(parts, fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", Clean(c.Resource.URI, 500), strings.ReplaceAll(c.Resource.Text, "</resource>", "<\\/resource>")))
			} else {
				parts = append(parts, fmt.Sprintf("[resource %s (%s, %d bytes of binary data), not shown]", Clean(c.Resource.URI, 500), Clean(c.Resource.MIMEType, 64), len(c.Resource.Blob)))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.MarshalIndent(res.StructuredContent, "", "  "); err == nil {
			parts = append(parts, string(b))
		}
	}
	out := cleanText(strings.Join(parts, "\n"))
	if strings.TrimSpace(out) == "" {
		if res.IsError {
			return tools.Errorf("Error: the MCP server %s reported an error without a message.", server)
		}
		return tools.Errorf("Error: the MCP server %s returned nothing for this call.", server)
	}
	out = capResult(out)
	return tools.Result{Output: out, IsError: res.IsError, Images: images}
}

// capResult keeps the first lines of a large result, with a note saying how much was cut.
func capResult(s string) string {
	total := len(s)
	lines := strings.Count(s, "\n") + 1
	cut := false
	if lines > maxResultLines {
		i := 0
		for range maxResultLines {
			i += strings.IndexByte(s[i:], '\n') + 1
		}
		s, cut = s[:i-1], true
	}
	if len(s) > maxResultBytes {
		s, cut = clip.String(s, maxResultBytes, ""), true
	}
	if cut {
		s += fmt.Sprintf("\n[result truncated: showing %d of %d bytes (%d lines); ask the tool for less]", len(s), total, lines)
	}
	return s
}
