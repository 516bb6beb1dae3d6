package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/mcp"
	"github.com/agentd-dev/agentd/protocol"
)

// Every request is checked once, here, at the Manager's door, whichever way it came in: rpc's
// method table decodes params and names a field of the wrong JSON type, and leaves the rest to
// these checks; agentd exec calls the Manager directly and gets the same answers. Each error is
// a *ParamError naming the field (-32602 on the wire).

// Validate checks the params of a session request (a pointer to one of protocol's params
// types) as the Manager does at its door; a stand-in for the Manager, such as rpc's test fake,
// calls it to answer bad params as the Manager would. Other types pass.
func Validate(params any) error {
	switch p := params.(type) {
	case *protocol.SessionNewParams:
		return checkNew(p)
	case *protocol.SessionLoadParams:
		return checkLoad(p)
	case *protocol.SessionListParams:
		return checkList(p)
	case *protocol.SessionForkParams:
		return checkFork(p)
	case *protocol.SessionIDParams:
		return checkRequired("sessionId", p.SessionID)
	case *protocol.SetConfigOptionParams:
		return checkSetConfig(p)
	case *protocol.PromptParams:
		return checkPrompt(p)
	case *protocol.CheckpointRestoreParams:
		return checkRestore(p)
	case *protocol.GrantRevokeParams:
		if err := checkRequired("sessionId", p.SessionID); err != nil {
			return err
		}
		return checkRequired("grantId", p.GrantID)
	case *protocol.ProgramStopParams:
		if err := checkRequired("sessionId", p.SessionID); err != nil {
			return err
		}
		return checkRequired("programId", p.ProgramID)
	}
	return nil
}

func checkRestore(p *protocol.CheckpointRestoreParams) error {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return err
	}
	if err := checkRequired("checkpointId", p.CheckpointID); err != nil {
		return err
	}
	switch p.Restore {
	case protocol.RestoreFiles, protocol.RestoreConversation, protocol.RestoreBoth:
		return nil
	case "":
		return paramErr("restore", "required")
	}
	return paramErr("restore", fmt.Sprintf("%q is not one of files, conversation, both", p.Restore))
}

func paramErr(field, msg string) error { return &ParamError{Field: field, Message: msg} }

func checkRequired(field, v string) error {
	if v == "" {
		return paramErr(field, "required")
	}
	return nil
}

func checkAbsPath(field, v string) error {
	if v == "" {
		return paramErr(field, "required")
	}
	if !filepath.IsAbs(v) {
		return paramErr(field, fmt.Sprintf("%q is not an absolute path", v))
	}
	return nil
}

// checkMode checks a permission mode against config's list, the one home of the mode names.
func checkMode(field, v string) error {
	if !config.ValidMode(v) {
		return paramErr(field, fmt.Sprintf("mode %q is not one of %s", v, strings.Join(config.Modes, ", ")))
	}
	return nil
}

// checkMCPServers reads the ACP McpServer entries with package mcp's parser, the one that runs
// them, so a malformed entry is a -32602 naming its field.
func checkMCPServers(list []json.RawMessage) error {
	if _, err := mcp.ParseList("mcpServers", list); err != nil {
		var fe *mcp.FieldError
		if errors.As(err, &fe) {
			return paramErr(fe.Field, fe.Message)
		}
		return paramErr("mcpServers", err.Error())
	}
	return nil
}

func checkNew(p *protocol.SessionNewParams) error {
	if err := checkAbsPath("cwd", p.Cwd); err != nil {
		return err
	}
	for i, d := range p.AdditionalDirectories {
		if err := checkAbsPath(fmt.Sprintf("additionalDirectories[%d]", i), d); err != nil {
			return err
		}
	}
	if v, ok := p.Meta["agentd/mode"]; ok {
		s, _ := v.(string)
		if err := checkMode("_meta.agentd/mode", s); err != nil {
			return err
		}
	}
	return checkMCPServers(p.MCPServers)
}

func checkLoad(p *protocol.SessionLoadParams) error {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return err
	}
	if err := checkAbsPath("cwd", p.Cwd); err != nil {
		return err
	}
	return checkMCPServers(p.MCPServers)
}

func checkFork(p *protocol.SessionForkParams) error {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return err
	}
	if p.Cwd != "" {
		if err := checkAbsPath("cwd", p.Cwd); err != nil {
			return err
		}
	}
	return checkMCPServers(p.MCPServers)
}

func checkList(p *protocol.SessionListParams) error {
	if p.Cwd != "" {
		return checkAbsPath("cwd", p.Cwd)
	}
	return nil
}

func checkSetConfig(p *protocol.SetConfigOptionParams) error {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return err
	}
	if err := checkRequired("configId", p.ConfigID); err != nil {
		return err
	}
	return checkRequired("value", p.Value)
}

func checkPrompt(p *protocol.PromptParams) error {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return err
	}
	if len(p.Prompt) == 0 {
		return paramErr("prompt", "must hold at least one content block")
	}
	for i, b := range p.Prompt {
		f := func(name string) string { return fmt.Sprintf("prompt[%d].%s", i, name) }
		switch b.Type {
		case "text":
		case "image":
			if b.MimeType == "" {
				return paramErr(f("mimeType"), "required for an image")
			}
			if b.Data == "" {
				return paramErr(f("data"), "required for an image")
			}
		case "resource_link":
			if b.URI == "" {
				return paramErr(f("uri"), "required for a resource_link")
			}
			if b.Name == "" {
				return paramErr(f("name"), "required for a resource_link")
			}
		case "resource":
			if b.Resource == nil {
				return paramErr(f("resource"), "required for a resource block")
			}
			if b.Resource.URI == "" {
				return paramErr(f("resource.uri"), "required")
			}
		case "audio":
			return paramErr(f("type"), "audio is not supported (promptCapabilities.audio is false)")
		case "":
			return paramErr(f("type"), "required")
		default:
			return paramErr(f("type"), fmt.Sprintf("%q is not one of text, image, resource_link, resource", b.Type))
		}
	}
	return nil
}
