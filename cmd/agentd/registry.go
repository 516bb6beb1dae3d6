package main

import (
	"encoding/json"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/anthropic"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/openai"
	"github.com/agentd-dev/agentd/providers/replay"
)

// newRegistry is the one place that names concrete providers: a new dialect costs one line.
func newRegistry() *providers.Registry {
	reg := providers.NewRegistry()
	reg.Register("anthropic", anthropic.New)
	reg.Register("openai", openai.New)
	reg.Register("gemini", gemini.New)
	reg.Register(replay.APIType, replay.New)
	return reg
}

func jsonObject(key string, v any) ([]byte, error) { return json.Marshal(map[string]any{key: v}) }
