package config

import (
	"strings"
	"testing"
)

func TestReplayBaseURLIsAFile(t *testing.T) {
	s := NewStore()
	for _, ok := range []string{`"/tmp/script.json"`, `"file:///tmp/script.json"`, `"script.jsonl"`} {
		if err := s.Set(LayerUser, []byte(`{"providers":{"r":{"apiType":"replay","baseUrl":`+ok+`}}}`)); err != nil {
			t.Errorf("baseUrl %s refused: %v", ok, err)
		}
	}
	err := s.Set(LayerUser, []byte(`{"providers":{"r":{"apiType":"replay","baseUrl":"https://example.com/s.json"}}}`))
	if err == nil || !strings.Contains(err.Error(), "providers.r.baseUrl") {
		t.Fatalf("a network replay baseUrl was accepted: %v", err)
	}
}
