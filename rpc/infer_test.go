package rpc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

// streamingProvider answers every request with its pieces of text, recording the request.
type streamingProvider struct {
	mu     sync.Mutex
	got    []*providers.Request
	pieces []string
	fail   *providers.Error
}

func (p *streamingProvider) Stream(ctx context.Context, r *providers.Request) iter.Seq[providers.Event] {
	p.mu.Lock()
	p.got = append(p.got, r)
	p.mu.Unlock()
	return func(yield func(providers.Event) bool) {
		for _, s := range p.pieces {
			if !yield(providers.Event{Type: providers.EventTextDelta, Text: s}) {
				return
			}
		}
		if p.fail != nil {
			yield(providers.Event{Type: providers.EventFailed, Err: p.fail})
			return
		}
		yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
	}
}

func initWithSettings(settings map[string]any) map[string]any {
	return map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"agent": map[string]any{"settings": settings}}}
}

func TestInferStreamsChunksThenAnswersTheWholeText(t *testing.T) {
	prov := &streamingProvider{pieces: []string{"fix: ", "handle ", "nil maps"}}
	reg := fakeDialects(func(cfg providers.Config) (providers.Provider, error) { return prov, nil })
	e := &engine{}
	h := startServer(t, e.options(Options{Registry: reg}))
	wantResult(t, h.initialize(t, initWithSettings(map[string]any{
		"provider":  "local",
		"providers": map[string]any{"local": map[string]any{"apiType": "openai", "baseUrl": "http://127.0.0.1:1/v1", "model": "coder"}},
	})), nil)

	id, ch := h.start(MethodInfer, map[string]any{"system": "Write a commit message.", "prompt": "diff --git a/x b/x"})
	var chunks []string
	for range prov.pieces {
		n := h.note(MethodInferChunk)
		var c struct {
			RequestID json.RawMessage `json:"requestId"`
			Text      string          `json:"text"`
		}
		if err := json.Unmarshal(n.Params, &c); err != nil {
			t.Fatal(err)
		}
		if string(c.RequestID) != string(mustJSON(t, id)) {
			t.Errorf("chunk requestId %s, want the request's id %v", c.RequestID, id)
		}
		chunks = append(chunks, c.Text)
	}
	var res struct{ Text string }
	wantResult(t, h.wait(ch), &res)
	if res.Text != "fix: handle nil maps" || strings.Join(chunks, "") != res.Text {
		t.Errorf("answer %q, chunks %q", res.Text, chunks)
	}
	r := prov.got[0]
	if r.System != "Write a commit message." || r.Model != "coder" || r.Messages[0].Parts[0].Text != "diff --git a/x b/x" {
		t.Errorf("model request %+v", r)
	}

	// model overrides the provider's; an empty prompt is refused before any model call.
	wantResult(t, h.call(MethodInfer, map[string]any{"prompt": "hi", "model": "other"}), nil)
	if prov.got[1].Model != "other" {
		t.Errorf("model = %q, want other", prov.got[1].Model)
	}
	wantError(t, h.call(MethodInfer, map[string]any{"prompt": "  "}), -32602, "prompt")
	wantError(t, h.call(MethodInfer, map[string]any{"prompt": 3}), -32602, "prompt")
	if len(prov.got) != 2 {
		t.Errorf("%d model calls, want 2", len(prov.got))
	}

	// A model failure is an error answer, not a crash.
	prov.fail = &providers.Error{Kind: providers.ErrOverloaded, Status: 503, Message: "overloaded"}
	prov.pieces = nil
	m := h.call(MethodInfer, map[string]any{"prompt": "hi"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "overloaded") {
		t.Fatalf("failure answer %+v", m)
	}
}

func TestInferWithoutProviderIsAClearError(t *testing.T) {
	e := &engine{}
	h := startServer(t, e.options(Options{Registry: checkingRegistry()}))
	wantResult(t, h.initialize(t, nil), nil)
	wantError(t, h.call(MethodInfer, map[string]any{"prompt": "hi"}), -32603, "provider")
}

func TestTranscribeThroughTheProvidersEndpoint(t *testing.T) {
	audio := []byte("RIFF....WAVEfmt fake")
	var mu sync.Mutex
	var got struct {
		path, model string
		file        []byte
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got.path = r.URL.Path
		if err := r.ParseMultipartForm(1 << 20); err == nil {
			got.model = r.FormValue("model")
			if f, _, err := r.FormFile("file"); err == nil {
				got.file, _ = io.ReadAll(f)
			}
		}
		w.Write([]byte(`{"text": "open the settings file"}`))
	}))
	defer srv.Close()
	e := &engine{}
	h := startServer(t, e.options(Options{Registry: checkingRegistry()}))
	settings := map[string]any{
		"provider":  "whisper",
		"providers": map[string]any{"whisper": map[string]any{"apiType": "openai", "baseUrl": srv.URL + "/v1", "model": "chat"}},
	}
	wantResult(t, h.initialize(t, initWithSettings(settings)), nil)
	b64 := base64.StdEncoding.EncodeToString(audio)

	// Off until the user's settings name a transcription provider and model.
	wantError(t, h.call(MethodTranscribe, map[string]any{"audio": b64, "mimeType": "audio/wav"}), -32603, "transcription is off")

	settings["transcription"] = map[string]any{"provider": "whisper", "model": "whisper-1"}
	h.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"agent": settings}})
	var res struct{ Text string }
	wantResult(t, h.call(MethodTranscribe, map[string]any{"audio": b64, "mimeType": "audio/wav"}), &res)
	mu.Lock()
	defer mu.Unlock()
	if res.Text != "open the settings file" || got.path != "/v1/audio/transcriptions" || got.model != "whisper-1" || string(got.file) != string(audio) {
		t.Errorf("answer %q, request %+v", res.Text, got)
	}
	wantError(t, h.call(MethodTranscribe, map[string]any{"audio": b64, "mimeType": "text/plain"}), -32602, "mimeType")
	wantError(t, h.call(MethodTranscribe, map[string]any{"audio": "", "mimeType": "audio/wav"}), -32602, "audio")
	wantError(t, h.call(MethodTranscribe, map[string]any{"audio": "not base64!", "mimeType": "audio/wav"}), -32602, "audio")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
