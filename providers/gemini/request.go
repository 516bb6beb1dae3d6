package gemini

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/agentd-dev/agentd/providers"
)

// syntheticIDPrefix marks tool call ids agentd made up for function calls that arrived without
// one (Gemini 2.5 sends none); such ids are not sent back.
const syntheticIDPrefix = "agentd-gemini-"

type blob struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"` // base64 on the wire
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type functionResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
	// Parts are the result's images (multimodal function responses).
	Parts []functionResponsePart `json:"parts,omitempty"`
}

type functionResponsePart struct {
	InlineData *blob `json:"inlineData"`
}

type part struct {
	Text             *string           `json:"text,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolBlock struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type thinkingConfig struct {
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type request struct {
	CachedContent     string            `json:"cachedContent,omitempty"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Contents          []content         `json:"contents"`
	Tools             []toolBlock       `json:"tools,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

// cachedContentRequest is the body of POST /v1beta/cachedContents: the stable prefix.
type cachedContentRequest struct {
	Model             string      `json:"model"`
	SystemInstruction *content    `json:"systemInstruction,omitempty"`
	Tools             []toolBlock `json:"tools,omitempty"`
	TTL               string      `json:"ttl"`
}

// ModelLimits is what the dialect knows of a model's thinking budget.
type ModelLimits struct {
	// Thinks is false for models without thinking (1.5, 2.0): no thinkingConfig is sent.
	Thinks bool
	// CanDisable says a budget of 0 turns thinking off; otherwise 0 is clamped to MinBudget.
	CanDisable bool
	MinBudget  int
	MaxBudget  int
	// MinCacheTokens is the smallest prefix cachedContents accepts.
	MinCacheTokens int
}

// Limits returns the thinking and caching limits of model, from Google's documentation of the
// Gemini 2.5 and 3 families.
func Limits(model string) ModelLimits {
	m := strings.TrimPrefix(strings.ToLower(model), "models/")
	switch {
	case strings.HasPrefix(m, "gemini-1"), strings.HasPrefix(m, "gemini-2.0"), strings.HasPrefix(m, "gemma"):
		return ModelLimits{MinCacheTokens: 4096}
	case strings.Contains(m, "flash-lite"):
		return ModelLimits{Thinks: true, CanDisable: true, MinBudget: 512, MaxBudget: 24576, MinCacheTokens: 1024}
	case strings.Contains(m, "flash"):
		return ModelLimits{Thinks: true, CanDisable: true, MinBudget: 1, MaxBudget: 24576, MinCacheTokens: 1024}
	case strings.Contains(m, "pro"):
		return ModelLimits{Thinks: true, CanDisable: false, MinBudget: 128, MaxBudget: 32768, MinCacheTokens: 4096}
	}
	return ModelLimits{Thinks: true, CanDisable: true, MinBudget: 1, MaxBudget: 24576, MinCacheTokens: 1024}
}

// thinkingFor maps the request's thinking flag and budget onto thinkingConfig: off is a budget of
// 0 (clamped to the model's minimum when it cannot stop thinking), on without a budget is -1
// (dynamic), on with a budget is that budget clamped to the model's range.
func thinkingFor(th providers.Thinking, lim ModelLimits) *thinkingConfig {
	if !lim.Thinks {
		return nil
	}
	budget := 0
	switch {
	case !th.Enabled:
		if !lim.CanDisable {
			budget = lim.MinBudget
		}
		return &thinkingConfig{ThinkingBudget: &budget}
	case th.BudgetTokens <= 0:
		budget = -1
	default:
		budget = min(max(th.BudgetTokens, lim.MinBudget), lim.MaxBudget)
	}
	return &thinkingConfig{ThinkingBudget: &budget, IncludeThoughts: true}
}

func tools(specs []providers.ToolSpec) []toolBlock {
	if len(specs) == 0 {
		return nil
	}
	decls := make([]functionDeclaration, 0, len(specs))
	for _, t := range specs {
		schema := t.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, ParametersJSONSchema: schema})
	}
	return []toolBlock{{FunctionDeclarations: decls}}
}

func systemInstruction(text string) *content {
	if text == "" {
		return nil
	}
	return &content{Parts: []part{{Text: &text}}}
}

// buildOptions says how the stable prefix travels.
type buildOptions struct {
	// cachedContent names a cachedContents resource holding the system prompt and tools; the
	// request then carries neither (the API refuses both together) and the live context moves
	// to the head of the first user turn.
	cachedContent string
}

// BuildRequest encodes req as a streamGenerateContent body with the system prompt and tools
// inline.
func BuildRequest(req *providers.Request, model string) ([]byte, error) {
	return buildRequest(req, model, buildOptions{})
}

func buildRequest(req *providers.Request, model string, opt buildOptions) ([]byte, error) {
	r, err := buildBody(req, model, opt)
	if err != nil {
		return nil, err
	}
	return encodeRequest(&r, req.Tools, &toolsJSON)
}

// toolsJSON is the encoding of the last tool set sent.
var toolsJSON providers.ToolsJSON

// encodeRequest is json.Marshal(r), byte for byte. The tools, the same with every request of a
// session and most of its bytes, are encoded once per tool set (specs) and spliced in where
// json.Marshal puts them.
func encodeRequest(r *request, specs []providers.ToolSpec, cache *providers.ToolsJSON) ([]byte, error) {
	if len(r.Tools) == 0 {
		return json.Marshal(r)
	}
	return providers.MarshalWithTools(cache, specs, r, &r.Tools, func(marker string) toolBlock {
		return toolBlock{FunctionDeclarations: []functionDeclaration{{Name: marker}}}
	})
}

func buildBody(req *providers.Request, model string, opt buildOptions) (request, error) {
	var r request
	if req == nil {
		return r, errors.New("nil request")
	}
	if req.Model != "" {
		model = req.Model
	}
	if model == "" {
		return r, errors.New("no model")
	}
	live := req.Context // the text the parts below point at; never reassigned
	pending := live != ""
	if opt.cachedContent != "" {
		r.CachedContent = opt.cachedContent
	} else {
		si := systemInstruction(req.System)
		if pending {
			if si == nil {
				si = &content{}
			}
			si.Parts = append(si.Parts, part{Text: &live})
			pending = false
		}
		r.SystemInstruction = si
		r.Tools = tools(req.Tools)
	}
	for _, m := range req.Messages {
		c := convert(m)
		if len(c.Parts) == 0 {
			continue
		}
		if pending && c.Role == "user" {
			c.Parts = append([]part{{Text: &live}}, c.Parts...)
			pending = false
		}
		r.Contents = append(r.Contents, c)
	}
	if pending {
		r.Contents = append([]content{{Role: "user", Parts: []part{{Text: &live}}}}, r.Contents...)
	}
	gc := &generationConfig{MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature, ThinkingConfig: thinkingFor(req.Thinking, Limits(model))}
	if gc.MaxOutputTokens > 0 || gc.Temperature != nil || gc.ThinkingConfig != nil {
		r.GenerationConfig = gc
	}
	return r, nil
}

func convert(m providers.Message) content {
	c := content{Role: "user"}
	if m.Role == providers.RoleAssistant {
		c.Role = "model"
	}
	// A signature that came on a thinking part (Gemini put it on a text part) rides on the next
	// part it can attach to.
	pending := ""
	results := map[string]int{} // a tool result's call id → its index in c.Parts
	for _, p := range m.Parts {
		var out part
		switch p.Type {
		case providers.PartText:
			if p.Text == "" && pending == "" {
				continue
			}
			out.Text = &p.Text
		case providers.PartImage:
			// A tool result's image goes inside its functionResponse.
			if i, ok := results[p.ToolCallID]; ok && p.ToolCallID != "" {
				fr := c.Parts[i].FunctionResponse
				fr.Parts = append(fr.Parts, functionResponsePart{InlineData: &blob{MimeType: p.MimeType, Data: p.Data}})
				continue
			}
			out.InlineData = &blob{MimeType: p.MimeType, Data: p.Data}
		case providers.PartThinking:
			// Thought summaries are not sent back; their signature is.
			if m.Role == providers.RoleAssistant && p.Signature != "" {
				pending = p.Signature
			}
			continue
		case providers.PartToolCall:
			args := p.Args
			if len(args) == 0 || !json.Valid(args) {
				args = json.RawMessage(`{}`)
			}
			id := p.ToolCallID
			if strings.HasPrefix(id, syntheticIDPrefix) {
				id = ""
			}
			out.FunctionCall = &functionCall{ID: id, Name: p.ToolName, Args: args}
			out.ThoughtSignature = p.Signature
		case providers.PartToolResult:
			id := p.ToolCallID
			if strings.HasPrefix(id, syntheticIDPrefix) {
				id = ""
			}
			key := "output"
			if p.IsError {
				key = "error"
			}
			out.FunctionResponse = &functionResponse{ID: id, Name: p.ToolName, Response: map[string]any{key: p.Text}}
			results[p.ToolCallID] = len(c.Parts)
		default:
			continue
		}
		if pending != "" && out.ThoughtSignature == "" && (out.Text != nil || out.FunctionCall != nil) {
			out.ThoughtSignature = pending
			pending = ""
		}
		c.Parts = append(c.Parts, out)
	}
	if pending != "" && c.Role == "model" {
		empty := ""
		c.Parts = append(c.Parts, part{Text: &empty, ThoughtSignature: pending})
	}
	return c
}
