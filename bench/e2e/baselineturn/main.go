// Command baselineturn is the floor under agentd's turn, per-delta and idle figures: the smallest
// agent a competent engineer would write for the exchanges bench/e2e drives, and nothing else. It
// speaks either door (LSP Content-Length frames, or newline-delimited JSON with the argument
// "acp"), answers initialize and session/new, and runs a prompt as agentd does: it POSTs to the
// configured OpenAI-compatible model with stream:true, reads the SSE reply, streams its text as
// agent_message_chunk notifications, runs read_file calls (through the client's
// fs/read_text_file when the client offers it, else from the disk) and posts again with their
// results, until a reply without tool calls; then it answers the prompt with end_turn.
//
// What it has is what agentd could also use: one goroutine reading stdin and one per prompt,
// net/http's default client, encoding/json, one write per message. What it lacks is agentd
// itself: no engine, system prompt, tool registry, permissions, transcript, title request or
// project probes. The e2e driver measures it interleaved with the real binaries, so what is left
// above it is agentd's own.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/bench/e2e/internal/frame"
)

func main() {
	a := &agent{acp: len(os.Args) > 1 && os.Args[1] == "acp", sessions: map[string]string{}, waiting: map[int]chan json.RawMessage{}}
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	for {
		body, err := frame.Read(r, a.acp)
		if err != nil {
			return // the end of input ends the process, as ACP asks
		}
		a.dispatch(body)
	}
}

type agent struct {
	acp bool

	writeMu sync.Mutex

	mu       sync.Mutex
	model    settings
	readFS   bool              // the client serves fs/read_text_file
	sessions map[string]string // session id → cwd
	nextID   int
	waiting  map[int]chan json.RawMessage // reverse requests awaiting their answer
}

// settings is the part of agentd's settings the baseline reads: the current provider's address
// and model, from initializationOptions (LSP) or the user file (ACP), as agentd reads them.
type settings struct {
	Provider  string `json:"provider"`
	Providers map[string]struct {
		BaseURL string `json:"baseUrl"`
		Model   string `json:"model"`
	} `json:"providers"`
}

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// name is method as the door spells it: ACP has no "agent/" prefix.
func (a *agent) name(method string) string {
	if a.acp {
		return strings.TrimPrefix(method, "agent/")
	}
	return method
}

func (a *agent) dispatch(body []byte) {
	var m message
	if json.Unmarshal(body, &m) != nil {
		return
	}
	if m.Method == "" {
		// The answer to a reverse request.
		id, _ := strconv.Atoi(string(m.ID))
		a.mu.Lock()
		ch := a.waiting[id]
		delete(a.waiting, id)
		a.mu.Unlock()
		if ch != nil {
			if m.Error != nil {
				ch <- nil
			} else {
				ch <- m.Result
			}
		}
		return
	}
	if m.ID == nil {
		return // initialized, cancel: nothing to do
	}
	switch m.Method {
	case "initialize":
		a.initialize(m.Params)
		a.answer(m.ID, map[string]any{"protocolVersion": 1, "capabilities": map[string]any{}, "agentCapabilities": map[string]any{}})
	case a.name("agent/session/new"):
		var p struct {
			Cwd string `json:"cwd"`
		}
		json.Unmarshal(m.Params, &p)
		a.mu.Lock()
		a.nextID++
		sid := "s" + strconv.Itoa(a.nextID)
		a.sessions[sid] = p.Cwd
		a.mu.Unlock()
		a.answer(m.ID, map[string]string{"sessionId": sid})
	case a.name("agent/session/prompt"):
		go a.prompt(m.ID, m.Params)
	default:
		a.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
	}
}

func (a *agent) initialize(params json.RawMessage) {
	type caps struct {
		FS struct {
			ReadTextFile bool `json:"readTextFile"`
		} `json:"fs"`
	}
	var p struct {
		ClientCapabilities    caps `json:"clientCapabilities"`
		InitializationOptions struct {
			Agent struct {
				ClientCapabilities caps     `json:"clientCapabilities"`
				Settings           settings `json:"settings"`
			} `json:"agent"`
		} `json:"initializationOptions"`
	}
	json.Unmarshal(params, &p)
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.acp {
		a.model = p.InitializationOptions.Agent.Settings
		a.readFS = p.InitializationOptions.Agent.ClientCapabilities.FS.ReadTextFile
		return
	}
	a.readFS = p.ClientCapabilities.FS.ReadTextFile
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		dir = filepath.Join(os.Getenv("HOME"), ".config")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "agentd", "config.json")); err == nil {
		json.Unmarshal(b, &a.model)
	}
}

// ---- the wire ----

// write sends one message in one write system call.
func (a *agent) write(v any) {
	body, err := json.Marshal(v)
	if err != nil {
		return
	}
	msg := frame.Append(nil, body, a.acp)
	a.writeMu.Lock()
	os.Stdout.Write(msg)
	a.writeMu.Unlock()
}

func (a *agent) answer(id json.RawMessage, result any) {
	a.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

type update struct {
	JSONRPC string       `json:"jsonrpc"`
	Method  string       `json:"method"`
	Params  updateParams `json:"params"`
}

type updateParams struct {
	SessionID string `json:"sessionId"`
	Update    any    `json:"update"`
}

func (a *agent) notify(sid string, u any) {
	a.write(update{JSONRPC: "2.0", Method: a.name("agent/session/update"), Params: updateParams{SessionID: sid, Update: u}})
}

// call sends a reverse request and waits for its answer (nil for an error).
func (a *agent) call(method string, params any) json.RawMessage {
	ch := make(chan json.RawMessage, 1)
	a.mu.Lock()
	a.nextID++
	id := a.nextID
	a.waiting[id] = ch
	a.mu.Unlock()
	a.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": a.name(method), "params": params})
	return <-ch
}

// ---- a prompt ----

type chatMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

var tools = json.RawMessage(`[{"type":"function","function":{"name":"read_file","description":"Read a file of the project.",` +
	`"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}]`)

type content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (a *agent) prompt(id json.RawMessage, params json.RawMessage) {
	var p struct {
		SessionID string    `json:"sessionId"`
		Prompt    []content `json:"prompt"`
	}
	json.Unmarshal(params, &p)
	var text strings.Builder
	for _, c := range p.Prompt {
		text.WriteString(c.Text)
	}
	a.mu.Lock()
	cwd := a.sessions[p.SessionID]
	st := a.model
	a.mu.Unlock()
	prov := st.Providers[st.Provider]
	msgs := []chatMessage{{Role: "user", Content: text.String()}}
	for range 16 {
		reply, calls, err := a.complete(p.SessionID, prov.BaseURL, prov.Model, msgs)
		if err != nil {
			a.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": err.Error()}})
			return
		}
		if len(calls) == 0 {
			a.answer(id, map[string]string{"stopReason": "end_turn"})
			return
		}
		msgs = append(msgs, chatMessage{Role: "assistant", Content: reply, ToolCalls: calls})
		for _, c := range calls {
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: c.ID, Content: a.readFile(p.SessionID, cwd, c)})
		}
	}
	a.answer(id, map[string]string{"stopReason": "max_turn_requests"})
}

// readFile runs one read_file call and says so to the client: tool_call, then its completion.
func (a *agent) readFile(sid, cwd string, c toolCall) string {
	var args struct {
		Path string `json:"path"`
	}
	json.Unmarshal([]byte(c.Function.Arguments), &args)
	path := args.Path
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	a.notify(sid, map[string]any{"sessionUpdate": "tool_call", "toolCallId": c.ID, "title": "Read " + args.Path, "kind": "read", "status": "pending"})
	var text string
	if c.Function.Name != "read_file" {
		text = "Error: unknown tool " + c.Function.Name
	} else if a.readFS {
		var res struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(a.call("agent/fs/read_text_file", map[string]string{"sessionId": sid, "path": path}), &res) != nil {
			text = "Error: cannot read " + args.Path
		} else {
			text = res.Content
		}
	} else if b, err := os.ReadFile(path); err != nil {
		text = "Error: " + err.Error()
	} else {
		text = string(b)
	}
	a.notify(sid, map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": c.ID, "status": "completed",
		"content": []any{map[string]any{"type": "content", "content": content{Type: "text", Text: text}}}})
	return text
}

type chatRequest struct {
	Model    string          `json:"model"`
	Messages []chatMessage   `json:"messages"`
	Tools    json.RawMessage `json:"tools"`
	Stream   bool            `json:"stream"`
}

type chunk struct {
	Choices []struct {
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
}

type textChunk struct {
	SessionUpdate string  `json:"sessionUpdate"`
	Content       content `json:"content"`
}

// The bounds docs/protocol.md sets on an agent_message_chunk: at most maxChunk of text, and while
// the model streams fast, one chunk per pace at most.
const (
	maxChunk = 4 << 10
	pace     = time.Millisecond // agentd's chunkPace (jsonrpc)
)

// chunker joins a message's text deltas into agent_message_chunks as docs/protocol.md allows:
// the deltas already in hand go together; the first chunk of a message, and the first after a
// pause, go at once; after that a chunk follows the previous one by pace at most (a timer sends
// what the stream has not yet completed).
type chunker struct {
	a   *agent
	sid string

	mu      sync.Mutex
	pending []byte
	sent    bool      // a chunk of this message is out
	last    time.Time // when it went
	timer   *time.Timer
}

// add takes one delta; more says the next event is already in hand.
func (c *chunker) add(text string, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, text...)
	switch {
	case len(c.pending) >= maxChunk:
		c.flushLocked()
	case more:
	case !c.sent:
		c.flushLocked()
	case c.timer == nil:
		if wait := pace - time.Since(c.last); wait > 0 {
			c.timer = time.AfterFunc(wait, c.flush)
		} else {
			c.flushLocked()
		}
	}
}

func (c *chunker) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

func (c *chunker) flushLocked() {
	if c.timer != nil {
		c.timer.Stop()
		c.timer = nil
	}
	if len(c.pending) == 0 {
		return
	}
	c.a.notify(c.sid, textChunk{SessionUpdate: "agent_message_chunk", Content: content{Type: "text", Text: string(c.pending)}})
	c.pending = c.pending[:0]
	c.sent, c.last = true, time.Now()
}

// complete makes one model call: it streams the reply's text to the client (see chunker) and
// returns it with the reply's tool calls.
func (a *agent) complete(sid, baseURL, model string, msgs []chatMessage) (string, []toolCall, error) {
	body, err := json.Marshal(chatRequest{Model: model, Messages: msgs, Tools: tools, Stream: true})
	if err != nil {
		return "", nil, err
	}
	resp, err := http.Post(strings.TrimSuffix(baseURL, "/")+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("model: %s", resp.Status)
	}
	var reply strings.Builder
	var calls []toolCall
	chunks := &chunker{a: a, sid: sid}
	defer chunks.flush()
	r := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if err == io.EOF {
				break
			}
			return "", nil, err
		}
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
		if !ok {
			continue
		}
		if string(data) == "[DONE]" {
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return "", nil, err
		}
		for _, ch := range c.Choices {
			if t := ch.Delta.Content; t != "" {
				reply.WriteString(t)
				chunks.add(t, eventBuffered(r))
			}
			for _, d := range ch.Delta.ToolCalls {
				for len(calls) <= d.Index {
					calls = append(calls, toolCall{Type: "function"})
				}
				tc := &calls[d.Index]
				if d.ID != "" {
					tc.ID = d.ID
				}
				tc.Function.Name += d.Function.Name
				tc.Function.Arguments += d.Function.Arguments
			}
		}
	}
	chunks.flush()
	return reply.String(), calls, nil
}

// eventBuffered says whether r already holds the next data line whole.
func eventBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	i := bytes.Index(b, []byte("data: "))
	return i >= 0 && bytes.IndexByte(b[i:], '\n') >= 0
}
