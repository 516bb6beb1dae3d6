package providers

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckEndpoint(t *testing.T) {
	tests := []struct {
		url       string
		origin    string
		local     bool
		need      KeyNeed
		plainHTTP bool
		wantErr   string
	}{
		// KeyRequired at a vendor's own origin is the registry's to say (TestTargetKeyBoundToOrigin).
		{url: "https://api.openai.com/v1", origin: "https://api.openai.com", need: KeyExpected},
		{url: "HTTPS://API.OpenAI.com./v1/", origin: "https://api.openai.com", need: KeyExpected},
		{url: "https://api.openai.com:443/v1", origin: "https://api.openai.com", need: KeyExpected},
		{url: "https://openrouter.ai/api/v1", origin: "https://openrouter.ai", need: KeyExpected},
		{url: "https://api.deepseek.com", origin: "https://api.deepseek.com", need: KeyExpected},
		{url: "http://127.0.0.1:1234/v1", origin: "http://127.0.0.1:1234", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://127.8.9.10:8080/v1", origin: "http://127.8.9.10:8080", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://[::1]:8080/v1", origin: "http://[::1]:8080", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://[0:0:0:0:0:0:0:1]:8080/v1", origin: "http://[::1]:8080", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://10.1.2.3:8000/v1", origin: "http://10.1.2.3:8000", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://172.16.0.5/v1", origin: "http://172.16.0.5", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://172.31.255.255/v1", origin: "http://172.31.255.255", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://192.168.1.20:11434/v1", origin: "http://192.168.1.20:11434", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://169.254.10.1/v1", origin: "http://169.254.10.1", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://[fe80::1]:8080/v1", origin: "http://[fe80::1]:8080", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://[fd12:3456::1]:8080/v1", origin: "http://[fd12:3456::1]:8080", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "http://[::ffff:192.168.0.1]:80/v1", origin: "http://[::ffff:192.168.0.1]", local: true, need: KeyNotNeeded, plainHTTP: true},
		// A name is never local, whatever it looks like: only an address literal is.
		{url: "https://llm.home.arpa/v1", origin: "https://llm.home.arpa", need: KeyExpected},
		{url: "https://gpu.internal/v1", origin: "https://gpu.internal", need: KeyExpected},
		// localhost is the one name that is local: HTTPTransport dials it at the loopback
		// address and never looks it up (TestLocalhostIsDialledAtLoopback).
		{url: "http://localhost:11434/v1", origin: "http://localhost:11434", local: true, need: KeyNotNeeded, plainHTTP: true},
		{url: "https://LocalHost.:8443/v1", origin: "https://localhost:8443", local: true, need: KeyNotNeeded},
		{url: "http://gpu-box:8080/v1", wantErr: "only by its address"},
		{url: "http://studio.local:1234/v1", wantErr: "only by its address"},
		{url: "http://ollama.localhost:11434/v1", wantErr: "only by its address"},
		{url: "http://llm.internal/v1", wantErr: "only by its address"},
		{url: "http://0.0.0.0:11434/v1", wantErr: "refuses plain http"},
		// Not private: just outside the RFC 1918 ranges, a public IPv6, a public name.
		{url: "https://172.32.0.1/v1", origin: "https://172.32.0.1", need: KeyExpected},
		{url: "https://[2001:db8::1]/v1", origin: "https://[2001:db8::1]", need: KeyExpected},
		{url: "http://172.32.0.1/v1", wantErr: "refuses plain http"},
		{url: "http://api.openai.com/v1", wantErr: "unencrypted"},
		{url: "http://8.8.8.8:11434/v1", wantErr: "refuses plain http"},
		{url: "http://ollama.example.com/v1", wantErr: "refuses plain http"},
		{url: "ftp://localhost/v1", wantErr: "must start with https://"},
		{url: "localhost:11434/v1", wantErr: "must start with https://"},
		{url: "https:///v1", wantErr: "no host"},
		{url: "https://user:sk-secret@api.openai.com/v1", wantErr: "user name or password"},
		{url: "https://api.openai.com/v1\x7f", wantErr: "not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			ep, err := CheckEndpoint(tt.url)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("CheckEndpoint(%q) error = %v, want one containing %q", tt.url, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "sk-secret") {
					t.Fatalf("the error repeats the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckEndpoint(%q): %v", tt.url, err)
			}
			want := Endpoint{Origin: tt.origin, Local: tt.local, KeyNeed: tt.need, PlainHTTP: tt.plainHTTP}
			if ep != want {
				t.Fatalf("CheckEndpoint(%q) = %+v, want %+v", tt.url, ep, want)
			}
		})
	}
}

func TestKeyAllowed(t *testing.T) {
	tests := []struct {
		saved, target string
		want          bool
	}{
		{"https://api.openai.com:443", "https://api.openai.com/v1/chat/completions", true},
		{"https://api.openai.com", "https://api.openai.com:443/v1", true},
		{"https://api.openai.com/v1", "https://api.openai.com:443/v1/models", true},
		{"https://api.openai.com", "https://api.openai.com.evil.example/v1", false},
		{"https://api.openai.com", "http://api.openai.com/v1", false},
		{"https://api.openai.com", "https://api.openai.com:8443/v1", false},
		{"https://openrouter.ai", "https://api.openai.com/v1", false},
		{"http://localhost:11434", "http://localhost:1234/v1", false},
		{"", "https://api.openai.com/v1", false},
		{"https://api.openai.com", "", false},
	}
	for _, tt := range tests {
		if got := KeyAllowed(tt.saved, tt.target); got != tt.want {
			t.Errorf("KeyAllowed(%q, %q) = %v, want %v", tt.saved, tt.target, got, tt.want)
		}
	}
}

// TestCheckRedirectNeverForwardsTheKey runs a real redirect chain on loopback: the same-origin
// hop is followed with the key, the cross-origin hop is refused and never reached.
func TestCheckRedirectNeverForwardsTheKey(t *testing.T) {
	var otherHits int
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits++
		w.WriteHeader(http.StatusOK)
	}))
	defer other.Close()
	var sawAuth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawAuth = append(sawAuth, r.URL.Path+" "+r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/v1/models":
			http.Redirect(w, r, "/v1/models/", http.StatusFound)
		case "/v1/models/":
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()

	c := &http.Client{CheckRedirect: CheckRedirect}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer sk-test")
	resp, err := c.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrCrossOriginRedirect) {
		t.Fatalf("Do = %v, want ErrCrossOriginRedirect", err)
	}
	if otherHits != 0 {
		t.Fatalf("the other origin was contacted %d times", otherHits)
	}
	want := []string{"/v1/models Bearer sk-test", "/v1/models/ Bearer sk-test"}
	if strings.Join(sawAuth, "|") != strings.Join(want, "|") {
		t.Fatalf("requests = %q, want %q", sawAuth, want)
	}
}
