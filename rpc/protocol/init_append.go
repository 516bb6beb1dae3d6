package protocol

import "strconv"

// AppendAgentServerCapabilities appends the JSON of c without reflection, byte for byte what
// json.Marshal writes. It is the bulk of the initialize answer, which an editor waits for at
// every start: encoding/json's first use of these types (building their encoders) cost ~3 % of
// the daemon's CPU between process start and that answer.
func AppendAgentServerCapabilities(dst []byte, c *AgentServerCapabilities) []byte {
	dst = append(dst, `{"protocolVersion":`...)
	dst = appendInt(dst, c.ProtocolVersion)
	a := &c.AgentCapabilities
	dst = append(dst, `,"agentCapabilities":{"loadSession":`...)
	dst = appendBool(dst, a.LoadSession)
	dst = append(dst, `,"sessionCapabilities":{`...)
	n := len(dst)
	for _, f := range [...]struct {
		key string
		set bool
	}{{"list", a.SessionCapabilities.List != nil}, {"resume", a.SessionCapabilities.Resume != nil},
		{"close", a.SessionCapabilities.Close != nil}, {"delete", a.SessionCapabilities.Delete != nil}} {
		if !f.set {
			continue
		}
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, f.key...)
		dst = append(dst, `":{}`...)
	}
	dst = append(dst, `},"promptCapabilities":{"image":`...)
	dst = appendBool(dst, a.PromptCapabilities.Image)
	dst = append(dst, `,"audio":`...)
	dst = appendBool(dst, a.PromptCapabilities.Audio)
	dst = append(dst, `,"embeddedContext":`...)
	dst = appendBool(dst, a.PromptCapabilities.EmbeddedContext)
	dst = append(dst, `},"mcpCapabilities":{"http":`...)
	dst = appendBool(dst, a.MCPCapabilities.HTTP)
	dst = append(dst, `,"sse":`...)
	dst = appendBool(dst, a.MCPCapabilities.SSE)
	dst = append(dst, `}},"providers":`...)
	dst = AppendProviderInfos(dst, c.Providers)
	return append(dst, '}')
}

// AppendProviderInfos appends the JSON of ps (null when nil) as json.Marshal writes it.
func AppendProviderInfos(dst []byte, ps []ProviderInfo) []byte {
	if ps == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range ps {
		p := &ps[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"providerId":`...)
		dst = appendString(dst, p.ProviderID)
		dst = append(dst, `,"apiType":`...)
		dst = appendString(dst, p.APIType)
		dst = append(dst, `,"baseUrl":`...)
		dst = appendString(dst, p.BaseURL)
		if p.Model != "" {
			dst = append(dst, `,"model":`...)
			dst = appendString(dst, p.Model)
		}
		if len(p.Models) > 0 {
			dst = append(dst, `,"models":[`...)
			for j, m := range p.Models {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = appendString(dst, m)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, `,"keyStatus":`...)
		dst = appendString(dst, p.KeyStatus)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// AppendString appends s as a JSON string, escaped as json.Marshal escapes it.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

func appendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

func appendBool(dst []byte, b bool) []byte { return strconv.AppendBool(dst, b) }
