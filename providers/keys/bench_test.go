package keys

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentd-dev/agentd/config"
)

// BenchmarkResolveByOrigin is one provider's key lookup as agent/providers/list does it inside
// initialize: target, endpoint, the environment, then agentd's file store, keyed by origin.
func BenchmarkResolveByOrigin(b *testing.B) {
	store := &File{Path: filepath.Join(b.TempDir(), "secrets.json")}
	store.Set("https://gw.example", "sk-0123456789")
	r := &Resolver{Registry: registry(), Store: store, Getenv: func(string) string { return "" }}
	ps := config.ProviderSettings{APIType: "openai", BaseURL: "https://gw.example/v1"}
	for b.Loop() {
		res, err := r.Resolve(context.Background(), "gw", ps, nil, false)
		if err != nil || res.Status != StatusSet {
			b.Fatal(res, err)
		}
	}
}
