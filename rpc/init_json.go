package rpc

import (
	"strconv"

	"github.com/agentd-dev/agentd/rpc/protocol"
)

// The initialize answers of both doors are written without reflection, byte for byte what
// json.Marshal writes for their fields (TestInitializeResultsMatchMarshal): they are the first
// thing a daemon writes, and encoding/json would first build an encoder for every type in them.

// MarshalJSON writes r as json.Marshal does.
func (r initializeResult) MarshalJSON() ([]byte, error) {
	dst := make([]byte, 0, 1024)
	dst = append(dst, `{"capabilities":{"positionEncoding":`...)
	dst = protocol.AppendJSONString(dst, r.Capabilities.PositionEncoding)
	if r.Capabilities.InlineCompletionProvider {
		dst = append(dst, `,"inlineCompletionProvider":true`...)
	}
	dst = append(dst, `,"experimental":{"agent":`...)
	dst = r.Capabilities.Experimental.Agent.AppendJSON(dst)
	dst = append(dst, `}},"serverInfo":{"name":`...)
	dst = protocol.AppendJSONString(dst, r.ServerInfo.Name)
	dst = append(dst, `,"version":`...)
	dst = protocol.AppendJSONString(dst, r.ServerInfo.Version)
	return append(dst, "}}"...), nil
}

// MarshalJSON writes r as json.Marshal does.
func (r acpInitResult) MarshalJSON() ([]byte, error) {
	dst := make([]byte, 0, 1024)
	dst = append(dst, `{"protocolVersion":`...)
	dst = strconv.AppendInt(dst, int64(r.ProtocolVersion), 10)
	dst = append(dst, `,"agentCapabilities":`...)
	dst = r.AgentCapabilities.AppendJSON(dst)
	dst = append(dst, `,"authMethods":`...)
	if r.AuthMethods == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, m := range r.AuthMethods {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = protocol.AppendJSONString(dst, m.ID)
			dst = append(dst, `,"name":`...)
			dst = protocol.AppendJSONString(dst, m.Name)
			dst = append(dst, `,"description":`...)
			dst = protocol.AppendJSONString(dst, m.Description)
			dst = append(dst, `,"type":`...)
			dst = protocol.AppendJSONString(dst, m.Type)
			dst = append(dst, `,"args":`...)
			dst = protocol.AppendJSONStrings(dst, m.Args)
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"agentInfo":`...)
	dst = r.AgentInfo.AppendJSON(dst)
	if len(r.Meta) > 0 {
		dst = append(dst, `,"_meta":`...)
		dst = protocol.AppendMeta(dst, r.Meta)
	}
	return append(dst, '}'), nil
}
