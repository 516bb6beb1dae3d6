package transcribe

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

// The fixtures are OpenAI's documented answers (API reference, "Create transcription", json
// response format, and its error object).

func serve(t *testing.T, status int, fixture string, check func(r *http.Request)) *httptest.Server {
	t.Helper()
	body, err := os.ReadFile("testdata/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check != nil {
			check(r)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestTranscribeSendsMultipartAndReadsText(t *testing.T) {
	audio := []byte("OggS\x00fake opus bytes")
	var seen struct {
		path, auth, model, format, filename, ctype string
		file                                       []byte
	}
	srv := serve(t, 200, "openai_transcription.json", func(r *http.Request) {
		seen.path, seen.auth = r.URL.Path, r.Header.Get("Authorization")
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			t.Errorf("not multipart: %v", err)
			return
		}
		seen.model, seen.format = r.FormValue("model"), r.FormValue("response_format")
		f, h, err := r.FormFile("file")
		if err != nil {
			t.Errorf("no file part: %v", err)
			return
		}
		seen.filename, seen.ctype = h.Filename, h.Header.Get("Content-Type")
		seen.file, _ = io.ReadAll(f)
	})
	cfg := providers.Config{ID: "openai", BaseURL: srv.URL + "/v1", APIKey: "sk-test"}
	text, err := Transcribe(context.Background(), srv.Client(), cfg, "whisper-1", audio, "audio/ogg;codecs=opus")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text, "Imagine the wildest idea") {
		t.Errorf("text %q", text)
	}
	if seen.path != "/v1/audio/transcriptions" || seen.auth != "Bearer sk-test" || seen.model != "whisper-1" || seen.format != "json" {
		t.Errorf("request %+v", seen)
	}
	if seen.filename != "audio.ogg" || seen.ctype != "audio/ogg;codecs=opus" || string(seen.file) != string(audio) {
		t.Errorf("file part %q %q %q", seen.filename, seen.ctype, seen.file)
	}
}

func TestTranscribeErrorsAreClearAndRedacted(t *testing.T) {
	srv := serve(t, 400, "openai_error.json", nil)
	cfg := providers.Config{BaseURL: srv.URL + "/v1", APIKey: "Invalid"} // a key that appears in the answer
	_, err := Transcribe(context.Background(), srv.Client(), cfg, "whisper-1", []byte("x"), "audio/wav")
	if err == nil || !strings.Contains(err.Error(), "answered 400") || strings.Contains(err.Error(), "Invalid file") {
		t.Errorf("error %v: want the status and the key redacted", err)
	}
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }))
	defer notJSON.Close()
	if _, err := Transcribe(context.Background(), notJSON.Client(), providers.Config{BaseURL: notJSON.URL}, "m", []byte("x"), "audio/wav"); err == nil || !strings.Contains(err.Error(), "not a transcription") {
		t.Errorf("html answer: %v", err)
	}
}

func TestTranscribeRefusesBadInputBeforeSending(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
	defer srv.Close()
	cfg := providers.Config{BaseURL: srv.URL}
	for _, c := range []struct {
		audio []byte
		mime  string
	}{{[]byte("x"), "text/plain"}, {[]byte("x"), "audio"}, {nil, "audio/wav"}, {make([]byte, MaxAudio+1), "audio/wav"}} {
		if _, err := Transcribe(context.Background(), srv.Client(), cfg, "m", c.audio, c.mime); err == nil {
			t.Errorf("%q with %d bytes: no error", c.mime, len(c.audio))
		}
	}
	if calls != 0 {
		t.Errorf("%d requests sent for bad input", calls)
	}
}
