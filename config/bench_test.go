package config

import "testing"

// userFile is a realistic user settings file: what strict checking walks at every start.
var userFile = []byte(`{
  "provider": "router",
  "providers": {
    "router": {"apiType": "openai", "baseUrl": "https://openrouter.ai/api/v1", "model": "anthropic/claude-sonnet-4.5"},
    "box":    {"apiType": "openai", "baseUrl": "http://192.168.1.20:11434/v1", "model": "qwen2.5-coder", "contextWindow": 32768},
    "gw":     {"apiType": "openai", "baseUrl": "https://gw.example/v1", "apiKeyEnv": "GW_KEY", "model": "m"}
  },
  "mode": "ask", "maxIterations": 30, "maxTokens": 8192,
  "thinking": {"enabled": true, "budgetTokens": 4096},
  "trustedProjects": ["/home/me/src/agentd"]
}`)

// BenchmarkSetUserLayer is reading the user file into the store: decoding, the strict key walk,
// the merge and validation, as at every start of the daemon.
func BenchmarkSetUserLayer(b *testing.B) {
	for b.Loop() {
		s := NewStore()
		if err := s.Set(LayerUser, userFile); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckKeys is the strict walk alone: what strict validation adds to reading a layer.
func BenchmarkCheckKeys(b *testing.B) {
	s := NewStore()
	if err := s.Set(LayerUser, userFile); err != nil {
		b.Fatal(err)
	}
	m := s.layers[LayerUser]
	for b.Loop() {
		if err := checkKeys(nil, m); err != nil {
			b.Fatal(err)
		}
	}
}
