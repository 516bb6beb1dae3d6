package tokens

import (
	"encoding/json"
	"fmt"
	"strings"
)

// How the figures are computed, from the request bodies alone.
//
// Tokens are bytes / 4 of what the model reads, in the order the provider caches it: the tools,
// the system prompt, then the conversation, each block as the dialect encoded it (JSON syntax
// included; a tokenizer's count is within about 20 % of it for English and code).
//
// Cached tokens are what the provider's prompt cache can serve a request from what the requests
// before it left there (all of them: a cache entry lives five minutes or more, the whole task
// takes seconds):
//
//   - Anthropic caches only at its cache_control breakpoints (at most 4 a request): a request
//     reads the longest prefix that ends at a breakpoint of an earlier request and is byte for
//     byte that request's, provided one of its own breakpoints lies at or up to 20 blocks after
//     it (the server looks back that far from each breakpoint); the marker itself is not part of
//     the prefix. Below 1,024 tokens nothing is cached (Sonnet's minimum).
//   - OpenAI caches automatically the longest prefix it has seen, in steps of 128 tokens from a
//     minimum of 1,024; the tools come before the messages (the order the server renders them
//     in, whatever the order of the JSON body's keys).
//   - Gemini: the tokens of the cachedContents resource a request names (agentd's explicit
//     cache: the system instruction and the tools). Gemini 2.5's implicit cache is prefix-based
//     like OpenAI's (minimum 1,024 tokens for Flash, 4,096 for Pro); implicitShare reports it
//     for the whole request.

// figure is one step's measurement.
type figure struct {
	step   int
	bytes  int // request bodies sent for this step (Gemini's cachedContents creation included)
	tokens int // input tokens of the step's model request
	cached int // of those, served by the prompt cache
	// prefix is the tokens the request shares, as a prefix, with the request before it: the
	// most any cache could serve it.
	prefix int
	// implicit is, for Gemini, what a prefix cache over the whole request would serve.
	implicit int
}

// item is one block of a request in cache order: its bytes without any cache marker, and
// whether it carried a breakpoint.
type item struct {
	text string
	brk  bool
}

func tokensOf(n int) int { return n / 4 }

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func join(items []item) string {
	var b strings.Builder
	for _, it := range items {
		b.WriteString(it.text)
	}
	return b.String()
}

// anthropicItems splits a /v1/messages body into its blocks in cache order (tools, system,
// messages), each without its cache_control.
func anthropicItems(body []byte) ([]item, error) {
	var r struct {
		System   json.RawMessage `json:"system"`
		Tools    []json.RawMessage
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, err
	}
	var out []item
	add := func(prefix string, raw json.RawMessage) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		// The block's own bytes, as sent (an unstable key order would show), without the
		// marker, which is not part of the cached prefix.
		text := string(raw)
		cc, brk := m["cache_control"]
		if brk {
			marker := `,"cache_control":` + string(cc)
			if !strings.Contains(text, marker) {
				return fmt.Errorf("cache_control not where the encoder puts it: %s", raw)
			}
			text = strings.Replace(text, marker, "", 1)
		}
		out = append(out, item{text: prefix + text, brk: brk})
		return nil
	}
	for _, t := range r.Tools {
		if err := add("tool:", t); err != nil {
			return nil, err
		}
	}
	if len(r.System) > 0 && r.System[0] == '"' {
		out = append(out, item{text: "system:" + string(r.System)})
	} else if len(r.System) > 0 {
		var blocks []json.RawMessage
		if err := json.Unmarshal(r.System, &blocks); err != nil {
			return nil, err
		}
		for _, b := range blocks {
			if err := add("system:", b); err != nil {
				return nil, err
			}
		}
	}
	for _, m := range r.Messages {
		if len(m.Content) > 0 && m.Content[0] == '"' {
			out = append(out, item{text: m.Role + ":" + string(m.Content)})
			continue
		}
		var blocks []json.RawMessage
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, err
		}
		for _, b := range blocks {
			if err := add(m.Role+":", b); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

const (
	anthropicMaxBreakpoints = 4
	anthropicLookback       = 20
	anthropicMinTokens      = 1024
)

// anthropicCached is what the cache serves cur, given the requests before it.
func anthropicCached(earlier [][]item, cur []item) int {
	var curBrk []int
	for i, it := range cur {
		if it.brk {
			curBrk = append(curBrk, i)
		}
	}
	best := 0
	for _, prev := range earlier {
		size := 0
		for i := 0; i < len(prev) && i < len(cur); i++ {
			if prev[i].text != cur[i].text {
				break
			}
			size += len(prev[i].text)
			if !prev[i].brk {
				continue
			}
			found := false
			for _, j := range curBrk {
				if j >= i && j-i <= anthropicLookback {
					found = true
				}
			}
			if found && size > best {
				best = size
			}
		}
	}
	if tokensOf(best) < anthropicMinTokens {
		return 0
	}
	return tokensOf(best)
}

func measureAnthropic(reqs []recorded) ([]figure, error) {
	var earlier [][]item
	var out []figure
	for _, r := range reqs {
		items, err := anthropicItems(r.body)
		if err != nil {
			return nil, fmt.Errorf("step %d: %v", r.step, err)
		}
		n := 0
		for _, it := range items {
			if it.brk {
				n++
			}
		}
		if n > anthropicMaxBreakpoints {
			return nil, fmt.Errorf("step %d: %d cache_control breakpoints, the API allows %d", r.step, n, anthropicMaxBreakpoints)
		}
		text := join(items)
		f := figure{step: r.step, bytes: len(r.body), tokens: tokensOf(len(text)), cached: anthropicCached(earlier, items)}
		if len(earlier) > 0 {
			f.prefix = tokensOf(commonPrefix(join(earlier[len(earlier)-1]), text))
		}
		out = append(out, f)
		earlier = append(earlier, items)
	}
	return out, nil
}

// openaiText is a chat-completions body in the order the server caches it: the tools, then the
// messages.
func openaiText(body []byte) (string, error) {
	var r struct {
		Tools    json.RawMessage
		Messages []json.RawMessage
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Write(r.Tools)
	for _, m := range r.Messages {
		b.Write(m)
	}
	return b.String(), nil
}

// prefixCached is what an automatic prefix cache serves: the longest prefix any earlier request
// shares, in steps of 128 tokens from min.
func prefixCached(earlier []string, cur string, min int) int {
	best := 0
	for _, p := range earlier {
		best = max(best, commonPrefix(p, cur))
	}
	t := tokensOf(best) / 128 * 128
	if t < min {
		return 0
	}
	return t
}

func measureOpenAI(reqs []recorded) ([]figure, error) {
	var earlier []string
	var out []figure
	for _, r := range reqs {
		text, err := openaiText(r.body)
		if err != nil {
			return nil, fmt.Errorf("step %d: %v", r.step, err)
		}
		f := figure{step: r.step, bytes: len(r.body), tokens: tokensOf(len(text)), cached: prefixCached(earlier, text, 1024)}
		if len(earlier) > 0 {
			f.prefix = tokensOf(commonPrefix(earlier[len(earlier)-1], text))
		}
		out = append(out, f)
		earlier = append(earlier, text)
	}
	return out, nil
}

// geminiParts is a generateContent or cachedContents body's parts in cache order: the system
// instruction, the tools, the contents.
func geminiParts(body []byte) (cached string, text string, err error) {
	var r struct {
		CachedContent     string          `json:"cachedContent"`
		SystemInstruction json.RawMessage `json:"systemInstruction"`
		Tools             json.RawMessage `json:"tools"`
		Contents          json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return "", "", err
	}
	return r.CachedContent, string(r.SystemInstruction) + string(r.Tools) + string(r.Contents), nil
}

func measureGemini(reqs []recorded) ([]figure, error) {
	caches := map[string]string{} // name → its payload, in cache order
	var earlier []string
	var out []figure
	pending := 0 // bytes of a cachedContents creation, counted with the step that uses it
	for _, r := range reqs {
		if r.step == 0 {
			_, text, err := geminiParts(r.body)
			if err != nil {
				return nil, err
			}
			caches[r.name] = text
			pending += len(r.body)
			continue
		}
		name, text, err := geminiParts(r.body)
		if err != nil {
			return nil, fmt.Errorf("step %d: %v", r.step, err)
		}
		f := figure{step: r.step, bytes: len(r.body) + pending}
		pending = 0
		if name != "" {
			payload, ok := caches[name]
			if !ok {
				return nil, fmt.Errorf("step %d names the cache %q, never created", r.step, name)
			}
			f.cached = tokensOf(len(payload))
			text = payload + text
		}
		f.tokens = tokensOf(len(text))
		f.implicit = prefixCached(earlier, text, 4096)
		if len(earlier) > 0 {
			f.prefix = tokensOf(commonPrefix(earlier[len(earlier)-1], text))
		}
		out = append(out, f)
		earlier = append(earlier, text)
	}
	return out, nil
}

// summary is a dialect's figures over the whole task.
type summary struct {
	tokens, cached, prefix, implicit, bytes int
	steps                                   int
}

func summarize(fs []figure) summary {
	var s summary
	for _, f := range fs {
		s.tokens += f.tokens
		s.cached += f.cached
		s.prefix += f.prefix
		s.implicit += f.implicit
		s.bytes += f.bytes
		s.steps++
	}
	return s
}

func (s summary) share() float64         { return float64(s.cached) / float64(s.tokens) }
func (s summary) prefixShare() float64   { return float64(s.prefix) / float64(s.tokens) }
func (s summary) implicitShare() float64 { return float64(s.implicit) / float64(s.tokens) }
