package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as the command, so the test runs the
// real main without building a separate binary.
func TestMain(m *testing.M) {
	if os.Getenv("FAKEMODEL_BE_MAIN") == "1" {
		os.Args = append([]string{"fakemodel"}, strings.Fields(os.Getenv("FAKEMODEL_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestCommandServesLogsAndExitsOnStdinClose(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	logf := filepath.Join(dir, "requests.jsonl")
	os.WriteFile(script, []byte(`{"turns":[{"text":"hello there","chunkSize":4}]}`), 0o644)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAKEMODEL_BE_MAIN=1", "FAKEMODEL_ARGS=--script "+script+" --log "+logf)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("ready line %q", line)
	}
	resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader("{\n\"stream\": true,\n\"messages\": []}"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"content":"hell"`) || !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Errorf("stream body %s", body)
	}
	logged, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(logged)), "\n")
	var v map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &v) != nil || v["stream"] != true {
		t.Errorf("log %q", logged)
	}
	stdin.Close()
	rest := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(r); rest <- b }()
	done := make(chan error, 1)
	go func() { b := <-rest; err := cmd.Wait(); rest <- b; done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
		if b := <-rest; len(b) != 0 {
			t.Errorf("stdout after the ready line: %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not exit after stdin closed")
	}
}

func TestRecordHeadersWritesCredentialsPerRequest(t *testing.T) {
	var buf strings.Builder
	h := recordHeaders(&buf, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	for _, key := range []string{"Bearer sk-1", ""} {
		r, _ := http.NewRequest("POST", "http://x/v1/chat/completions", nil)
		if key != "" {
			r.Header.Set("Authorization", key)
		}
		h.ServeHTTP(nopWriter{http.Header{}}, r)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", buf.String())
	}
	var first, second map[string]string
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[1]), &second)
	if first["authorization"] != "Bearer sk-1" || first["path"] != "/v1/chat/completions" || first["method"] != "POST" {
		t.Errorf("first line %v", first)
	}
	if v, ok := second["authorization"]; !ok || v != "" {
		t.Errorf("second line %v: want an empty authorization", second)
	}
}

type nopWriter struct{ h http.Header }

func (w nopWriter) Header() http.Header         { return w.h }
func (w nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w nopWriter) WriteHeader(int)             {}
