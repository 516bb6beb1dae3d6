package config

import (
	"strings"
	"testing"
	"time"
)

func TestFirstByteTimeoutSetting(t *testing.T) {
	s := NewStore()
	if d := s.Get().Providers["ollama"].FirstByteWait(); d != 0 {
		t.Errorf("default = %v, want 0 (the transport's default)", d)
	}
	if err := s.Set(LayerUser, []byte(`{"providers":{"ollama":{"firstByteTimeout":300},"openai":{"firstByteTimeout":0.25}}}`)); err != nil {
		t.Fatal(err)
	}
	if d := s.Get().Providers["ollama"].FirstByteWait(); d != 5*time.Minute {
		t.Errorf("ollama = %v, want 5m", d)
	}
	if d := s.Get().Providers["openai"].FirstByteWait(); d != 250*time.Millisecond {
		t.Errorf("openai = %v, want 250ms", d)
	}
	for _, bad := range []string{`-1`, `1e12`, `"120s"`} {
		err := s.Set(LayerClient, []byte(`{"providers":{"ollama":{"firstByteTimeout":`+bad+`}}}`))
		if err == nil || !strings.Contains(err.Error(), "providers.ollama.firstByteTimeout") {
			t.Errorf("%s: err = %v, want one naming providers.ollama.firstByteTimeout", bad, err)
		}
	}
	if d := s.Get().Providers["ollama"].FirstByteWait(); d != 5*time.Minute {
		t.Errorf("a rejected value changed the setting: %v", d)
	}
}
