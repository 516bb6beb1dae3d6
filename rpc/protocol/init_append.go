package protocol

import "strconv"

// The shapes of initialize's answer, on both doors, written without reflection and byte for
// byte what json.Marshal writes for the same fields (TestInitializeShapesMatchMarshal).
// initialize is the first answer a daemon writes: through encoding/json it built an encoder for
// each of these types (field lists, names, two maps a struct), and the reflection grew the read
// goroutine's stack to 32 KB, before the editor had its answer.

// MarshalJSON writes c as json.Marshal does.
func (c AgentCapabilities) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(make([]byte, 0, 256)), nil
}

// AppendJSON appends c as json.Marshal writes it.
func (c AgentCapabilities) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"loadSession":`...)
	dst = strconv.AppendBool(dst, c.LoadSession)
	dst = append(dst, `,"sessionCapabilities":{`...)
	n := 0
	for _, f := range [...]struct {
		name string
		on   bool
	}{{"list", c.SessionCapabilities.List != nil}, {"resume", c.SessionCapabilities.Resume != nil},
		{"close", c.SessionCapabilities.Close != nil}, {"delete", c.SessionCapabilities.Delete != nil}} {
		if !f.on {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, '"')
		dst = append(dst, f.name...)
		dst = append(dst, `":{}`...)
	}
	dst = append(dst, `},"promptCapabilities":{"image":`...)
	dst = strconv.AppendBool(dst, c.PromptCapabilities.Image)
	dst = append(dst, `,"audio":`...)
	dst = strconv.AppendBool(dst, c.PromptCapabilities.Audio)
	dst = append(dst, `,"embeddedContext":`...)
	dst = strconv.AppendBool(dst, c.PromptCapabilities.EmbeddedContext)
	dst = append(dst, `},"mcpCapabilities":{"http":`...)
	dst = strconv.AppendBool(dst, c.MCPCapabilities.HTTP)
	dst = append(dst, `,"sse":`...)
	dst = strconv.AppendBool(dst, c.MCPCapabilities.SSE)
	return append(dst, "}}"...)
}

// MarshalJSON writes c as json.Marshal does.
func (c AgentServerCapabilities) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(make([]byte, 0, 1024)), nil
}

// AppendJSON appends c as json.Marshal writes it.
func (c AgentServerCapabilities) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"protocolVersion":`...)
	dst = strconv.AppendInt(dst, int64(c.ProtocolVersion), 10)
	dst = append(dst, `,"agentCapabilities":`...)
	dst = c.AgentCapabilities.AppendJSON(dst)
	dst = append(dst, `,"providers":`...)
	dst = AppendProviderInfos(dst, c.Providers)
	return append(dst, '}')
}

// MarshalJSON writes p as json.Marshal does.
func (p ProviderInfo) MarshalJSON() ([]byte, error) { return p.AppendJSON(make([]byte, 0, 160)), nil }

// AppendJSON appends p as json.Marshal writes it.
func (p ProviderInfo) AppendJSON(dst []byte) []byte {
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
		dst = append(dst, `,"models":`...)
		dst = AppendJSONStrings(dst, p.Models)
	}
	dst = append(dst, `,"keyStatus":`...)
	dst = appendString(dst, p.KeyStatus)
	return append(dst, '}')
}

// AppendProviderInfos appends list as json.Marshal writes a []ProviderInfo (nil as null).
func AppendProviderInfos(dst []byte, list []ProviderInfo) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = list[i].AppendJSON(dst)
	}
	return append(dst, ']')
}

// AppendJSONStrings appends list as json.Marshal writes a []string (nil as null).
func AppendJSONStrings(dst []byte, list []string) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, s)
	}
	return append(dst, ']')
}

// MarshalJSON writes c as json.Marshal does.
func (c ClientInfo) MarshalJSON() ([]byte, error) { return c.AppendJSON(make([]byte, 0, 64)), nil }

// AppendJSON appends c as json.Marshal writes it.
func (c ClientInfo) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"name":`...)
	dst = appendString(dst, c.Name)
	if c.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = appendString(dst, c.Title)
	}
	if c.Version != "" {
		dst = append(dst, `,"version":`...)
		dst = appendString(dst, c.Version)
	}
	return append(dst, '}')
}
