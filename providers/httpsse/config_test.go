package httpsse_test

import (
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

func TestBaseURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "https://api.example.com"},
		{"http://127.0.0.1:9", "http://127.0.0.1:9"},
		{"http://127.0.0.1:9/", "http://127.0.0.1:9"},
		{"http://127.0.0.1:9/v1", "http://127.0.0.1:9"},
		{"http://127.0.0.1:9/v1//", "http://127.0.0.1:9"},
		{"http://127.0.0.1:9/proxy/v1", "http://127.0.0.1:9/proxy"},
	} {
		if got, err := httpsse.BaseURL(c.in, "https://api.example.com/v1", "/v1"); err != nil || got != c.want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := httpsse.BaseURL("http://[::1", "", "/v1"); err == nil {
		t.Error("an unparsable base URL was accepted")
	}
}

func TestHeader(t *testing.T) {
	cfg := providers.Config{APIKey: "k", Headers: map[string]string{"X-Extra": "1", "x-key": "configured"}}
	h := httpsse.Header(cfg, "x-key")
	if h.Get("X-Extra") != "1" || h.Get("X-Key") != "k" || len(h) != 2 {
		t.Errorf("header = %v", h)
	}
	cfg.APIKey = ""
	if h := httpsse.Header(cfg, "x-key"); h.Get("X-Key") != "configured" {
		t.Errorf("without a key: %v", h)
	}
}
