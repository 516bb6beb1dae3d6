package main

import (
	"encoding/json"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/anthropic"
	"github.com/agentd-dev/agentd/providers/gemini"
	"github.com/agentd-dev/agentd/providers/openai"
	"github.com/agentd-dev/agentd/providers/replay"
)

// newRegistry is the one place that names concrete providers: a new dialect costs one line.
func newRegistry() *providers.Registry {
	reg := providers.NewRegistry()
	reg.Register(anthropic.Dialect)
	reg.Register(openai.Dialect)
	reg.Register(gemini.Dialect)
	reg.Register(replay.Dialect)
	return reg
}

// newSettings is the settings store checked against the dialects compiled in (apiType and
// endpoint rules when settings are read), with the registry it checks against.
func newSettings() (*config.Store, *providers.Registry) {
	reg := newRegistry()
	store := config.NewStore()
	if err := store.UseDialects(reg); err != nil {
		panic("the built-in settings do not pass the dialects' checks: " + err.Error())
	}
	return store, reg
}

func jsonObject(key string, v any) ([]byte, error) { return json.Marshal(map[string]any{key: v}) }
