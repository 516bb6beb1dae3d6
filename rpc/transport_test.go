package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
)

// These tests pin, over the wire, what the connection under the server guarantees. They were
// written against go.lsp.dev/jsonrpc2's connection and pass unchanged on jsonrpc's own.

// expect registers a channel for the answer with the given raw id (as the client test peer keys
// them: 41, "\"s\"", null).
func (h *harness) expect(id string) chan *wireMsg {
	ch := make(chan *wireMsg, 1)
	h.mu.Lock()
	h.pending[id] = ch
	h.mu.Unlock()
	return ch
}

// silent fails when ch receives anything: an answer nobody should have written.
func silent(t *testing.T, ch chan *wireMsg, what string) {
	t.Helper()
	select {
	case m := <-ch:
		t.Fatalf("%s was answered: %+v", what, m)
	default:
	}
}

var promptText = []any{map[string]any{"type": "text", "text": "x"}}

// A request waiting behind another one of its session (the manager queues prompts) is cancelled
// by $/cancelRequest without touching the one that runs: cancellation is read ahead of queued
// work, and only the named id is cancelled.
func TestCancelQueuedRequest(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	var turn sync.Mutex // the session's one turn at a time
	running := make(chan struct{}, 1)
	queued := make(chan struct{}, 1)
	release := make(chan struct{})
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		if p.Prompt[0].Text == "first" {
			turn.Lock()
			defer turn.Unlock()
			running <- struct{}{}
			<-release
			return protocol.PromptResult{StopReason: protocol.StopEndTurn}, nil
		}
		queued <- struct{}{}
		got := make(chan struct{})
		go func() { turn.Lock(); close(got) }()
		select {
		case <-got:
			turn.Unlock()
			return protocol.PromptResult{StopReason: protocol.StopEndTurn}, nil
		case <-ctx.Done():
			go func() { <-got; turn.Unlock() }()
			return protocol.PromptResult{}, ctx.Err()
		}
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	_, first := h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s", "prompt": []any{map[string]any{"type": "text", "text": "first"}}})
	<-running
	id, second := h.start(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s", "prompt": []any{map[string]any{"type": "text", "text": "second"}}})
	<-queued
	h.notify("$/cancelRequest", map[string]any{"id": id})
	wantError(t, h.wait(second), -32800, "request cancelled")
	silent(t, first, "the running prompt")
	close(release)
	var r protocol.PromptResult
	wantResult(t, h.wait(first), &r)
	if r.StopReason != protocol.StopEndTurn {
		t.Fatalf("the running prompt ended %q", r.StopReason)
	}
}

// A request with a string id is answered under that id, and $/cancelRequest naming the string
// cancels it; a numeric id with the same digits names another request.
func TestCancelWithStringID(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	started := make(chan struct{}, 1)
	e.fake.list = func(ctx context.Context) (protocol.SessionListResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return protocol.SessionListResult{}, ctx.Err()
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	ch := h.expect(`"7"`)
	h.send(map[string]any{"jsonrpc": "2.0", "id": "7", "method": protocol.MethodSessionList, "params": map[string]any{}})
	<-started
	h.notify("$/cancelRequest", map[string]any{"id": 7}) // not the same id
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
	silent(t, ch, "a request cancelled by a numeric id that is not its own")
	h.notify("$/cancelRequest", map[string]any{"id": "7"})
	wantError(t, h.wait(ch), -32800, "request cancelled")
}

// Answers the editor sends to ids agentd never used (or no longer waits for) are dropped: nothing
// is written in reply, and the connection keeps serving.
func TestAnswerToUnknownIDIsDropped(t *testing.T) {
	h := startServer(t, Options{})
	h.initialize(t, nil)
	null := h.expect("null")
	h.writeRaw([]byte(`{"jsonrpc":"2.0","id":999,"result":{"x":1}}`))
	h.writeRaw([]byte(`{"jsonrpc":"2.0","id":"nobody","error":{"code":-32601,"message":"no"}}`))
	h.writeRaw([]byte(`{"jsonrpc":"2.0","id":null,"result":null}`))
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
	silent(t, null, "an answer to an unknown id")
	select {
	case m := <-h.requests:
		t.Fatalf("unexpected request %+v", m)
	default:
	}
}

// A well-framed body that is not JSON, in the middle of a stream, is answered -32700 with a null
// id; the requests around it are served.
func TestMalformedJSONMidStream(t *testing.T) {
	h := startServer(t, Options{})
	h.initialize(t, nil)
	_, before := h.start(protocol.MethodProvidersList, nil)
	null := h.expect("null")
	h.writeRaw([]byte(`{"jsonrpc":"2.0","id":5,"method":`))
	_, after := h.start(protocol.MethodProvidersList, nil)
	wantResult(t, h.wait(before), nil)
	m := h.wait(null)
	wantError(t, m, -32700, "parse error")
	if string(m.ID) != "null" {
		t.Fatalf("parse error answered with id %s, want null", m.ID)
	}
	wantResult(t, h.wait(after), nil)
}

// A batch is refused as a whole with one -32600 answer (id null); none of its members runs.
func TestBatchIsRefused(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	listed := make(chan struct{}, 1)
	e.fake.list = func(ctx context.Context) (protocol.SessionListResult, error) {
		listed <- struct{}{}
		return protocol.SessionListResult{}, nil
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	null := h.expect("null")
	one := h.expect("1000")
	h.writeRaw([]byte(`[{"jsonrpc":"2.0","id":1000,"method":"` + protocol.MethodSessionList + `","params":{}}]`))
	wantError(t, h.wait(null), -32600, "batch requests are not supported")
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
	silent(t, one, "a batch member")
	select {
	case <-listed:
		t.Fatal("a batch member ran")
	default:
	}
}

// A reverse call still waiting when the editor's input ends fails with the end of input; it does
// not wait for its timeout, and the server exits.
func TestEOFFailsPendingReverseCall(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	result := make(chan error, 1)
	e.fake.newFn = func(ctx context.Context, p protocol.SessionNewParams) (protocol.SessionNewResult, error) {
		// Neither the request's context nor a deadline can end this call: only the end of input.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Hour)
		defer cancel()
		_, err := e.fake.deps.Client.RequestPermission(cctx, protocol.RequestPermissionParams{SessionID: "s1"})
		result <- err
		return protocol.SessionNewResult{}, err
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil) // onCall nil: the client never answers
	h.start(protocol.MethodSessionNew, map[string]any{"cwd": "/a"})
	h.request(protocol.MethodRequestPermission)
	h.in.Close()
	select {
	case err := <-result:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("pending call ended with %v, want the end of input", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the pending reverse call did not fail at the end of input")
	}
	h.waitExit(t)
}

// A panic in a notification handler (inline, on the reading goroutine) and one in a request's
// handler leave the daemon serving; the request is answered -32603.
func TestHandlerPanicKeepsServing(t *testing.T) {
	e := &engine{fake: &fakeSessions{}}
	e.fake.prompt = func(ctx context.Context, p protocol.PromptParams) (protocol.PromptResult, error) {
		panic("boom")
	}
	h := startServer(t, e.options(Options{}))
	h.initialize(t, nil)
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": promptText}), -32603, "internal error: boom")
	h.notify(protocol.MethodSessionCancel, json.RawMessage(`{"sessionId":"panic"}`)) // the fake's Cancel panics
	wantResult(t, h.call(protocol.MethodProvidersList, nil), nil)
	wantError(t, h.call(protocol.MethodSessionPrompt, map[string]any{"sessionId": "s1", "prompt": promptText}), -32603, "internal error: boom")
}
