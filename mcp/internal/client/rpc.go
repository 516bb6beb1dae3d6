package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// cancelTimeout bounds the notifications/cancelled sent for a call given up (the SDK's 5 s).
const cancelTimeout = 5 * time.Second

// call sends a request and waits for its answer, ctx's end, or the session's.
func (s *Session) call(ctx context.Context, method string, params, result any) error {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan answer, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	msg, err := json.Marshal(message{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: params})
	if err != nil {
		s.retire(id)
		return fmt.Errorf("calling %q: %w", method, err)
	}
	if err := s.conn.send(ctx, msg, id); err != nil {
		s.retire(id)
		if ctx.Err() != nil {
			go s.cancelled(ctx, id)
			return ctx.Err()
		}
		return fmt.Errorf("calling %q: %w", method, err)
	}
	select {
	case a := <-ch:
		if a.err != nil {
			return fmt.Errorf("calling %q: %w", method, a.err)
		}
		in := a.in
		if len(in.Error) > 0 && string(in.Error) != "null" {
			return fmt.Errorf("calling %q: %w", method, rpcError(in.Error))
		}
		if result != nil {
			if err := json.Unmarshal(in.Result, result); err != nil {
				return fmt.Errorf("calling %q: the server's result does not decode: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		s.retire(id)
		go s.cancelled(ctx, id)
		return ctx.Err()
	case <-s.done:
		s.retire(id)
		return fmt.Errorf("calling %q: the connection ended: %w", method, s.err)
	}
}

// rpcError decodes a response's error member; one of the wrong shape is still an error, with
// its text.
func rpcError(raw json.RawMessage) *Error {
	var e Error
	if json.Unmarshal(raw, &e) != nil || e.Message == "" && e.Code == 0 {
		txt := string(raw)
		if len(txt) > 200 {
			txt = txt[:200]
		}
		return &Error{Message: "malformed error " + strconv.Quote(txt)}
	}
	return &e
}

// cancelled tells the server a call was given up (best effort, bounded, off the caller's path).
func (s *Session) cancelled(ctx context.Context, id int64) {
	select {
	case <-s.done:
		return
	default:
	}
	nctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer stop()
	reason := "context canceled"
	if err := ctx.Err(); err != nil {
		reason = err.Error()
	}
	_ = s.notify(nctx, "notifications/cancelled", map[string]any{"requestId": id, "reason": reason})
}

// answer is what a call gets: the server's response, or the transport's reason there is none.
type answer struct {
	in  incoming
	err error
}

// waiting reports whether call id still waits for its answer.
func (s *Session) waiting(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.pending[id]
	return ok
}

// deliverError fails call id, if it still waits, with the transport's reason.
func (s *Session) deliverError(id int64, reason string) {
	s.mu.Lock()
	ch, ok := s.pending[id]
	delete(s.pending, id)
	s.mu.Unlock()
	if ok {
		ch <- answer{err: errors.New(reason)}
	}
}

func (s *Session) retire(id int64) {
	s.mu.Lock()
	delete(s.pending, id)
	s.mu.Unlock()
}

func (s *Session) notify(ctx context.Context, method string, params any) error {
	msg, err := json.Marshal(message{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	return s.conn.send(ctx, msg, 0)
}

// maxLogged bounds what one session logs of what it dropped: a server that floods its output
// with garbage must not flood agentd's log too.
const maxLogged = 100

func (s *Session) log(msg string, err error) {
	if s.opts.Log == nil {
		return
	}
	s.mu.Lock()
	s.logged++
	n := s.logged
	s.mu.Unlock()
	switch {
	case n < maxLogged:
		s.opts.Log(msg, err)
	case n == maxLogged:
		s.opts.Log(msg+"; what this server sends wrong is no longer logged", err)
	}
}

// receive takes one message from the server: an answer goes to its caller, a notification to
// its handler, a request gets its answer. What is malformed or unexpected is logged and dropped.
func (s *Session) receive(raw []byte) {
	var in incoming
	if err := json.Unmarshal(raw, &in); err != nil {
		s.log("dropped a message from the MCP server that is not a JSON-RPC object", err)
		return
	}
	hasID := len(in.ID) > 0 && string(in.ID) != "null"
	switch {
	case in.Method != "" && hasID:
		s.answer(in)
	case in.Method != "":
		switch in.Method {
		case "notifications/tools/list_changed":
			if s.opts.ToolsChanged != nil {
				s.opts.ToolsChanged()
			}
		case "notifications/prompts/list_changed":
			if s.opts.PromptsChanged != nil {
				s.opts.PromptsChanged()
			}
		}
	case hasID:
		id, err := strconv.ParseInt(string(in.ID), 10, 64)
		s.mu.Lock()
		ch, ok := s.pending[id]
		delete(s.pending, id)
		s.mu.Unlock()
		if err != nil || !ok {
			s.log("dropped an answer to no pending call (id "+clipID(in.ID)+")", nil)
			return
		}
		ch <- answer{in: in}
	default:
		s.log("dropped a message from the MCP server that is neither a request nor an answer", nil)
	}
}

func clipID(id json.RawMessage) string {
	if len(id) > 40 {
		return string(id[:40]) + "…"
	}
	return string(id)
}

// answer replies to a request from the server: ping, roots/list (there are none: the client
// declares no roots), and method-not-found for the rest, as the SDK's client without handlers.
func (s *Session) answer(in incoming) {
	reply := message{JSONRPC: "2.0", ID: in.ID}
	switch in.Method {
	case "ping":
		reply.Result = json.RawMessage(`{}`)
	case "roots/list":
		reply.Result = json.RawMessage(`{"roots":[]}`)
	default:
		reply.Error = &Error{Code: CodeMethodNotFound, Message: "method not found: " + strconv.Quote(clipMethod(in.Method))}
	}
	msg, err := json.Marshal(reply)
	if err != nil {
		return
	}
	ctx, stop := context.WithTimeout(context.Background(), cancelTimeout)
	defer stop()
	if err := s.conn.send(ctx, msg, 0); err != nil {
		s.log("answering the MCP server's "+strconv.Quote(clipMethod(in.Method))+" failed", err)
	}
}

func clipMethod(m string) string {
	if len(m) > 64 {
		return m[:64]
	}
	return m
}
