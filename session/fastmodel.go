package session

import (
	"context"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// Side requests (a session's title, a compaction summary, the answer review) go to settings
// models.fast when it names one, and to the turn's model otherwise or when the fast one fails:
// they are short, and the peers' "small model" does them at a fraction of the main model's
// price and time. web_search takes models.fast only on a search provider (webSearchModel).

// sideModel is the provider and model side requests use: models.fast, falling back to the
// turn's (prov, pcfg) when it names none or its provider cannot be had. fast reports whether
// it is another model than the turn's.
func (m *Manager) sideModel(ctx context.Context, set config.Settings, prov providers.Provider, pcfg providers.Config) (providers.Provider, providers.Config, bool) {
	f := set.Fast()
	if f.Provider == "" && f.Model == "" {
		return prov, pcfg, false
	}
	p, c := prov, pcfg
	if f.Provider != "" {
		fp, fc, err := m.d.Providers.Provider(ctx, f.Provider)
		if err != nil {
			m.log.Warn("models.fast: provider unavailable, using the turn's model: " + err.Error())
			return prov, pcfg, false
		}
		p, c = fp, fc
	}
	if f.Model != "" {
		c.Model = f.Model
	}
	if p == prov && c.Model == pcfg.Model {
		return prov, pcfg, false
	}
	return p, c, true
}

// collectSide sends a side request to the fast model and, when that fails, once more to the
// turn's model; calls are the requests it made, for the session's cost.
func (m *Manager) collectSide(ctx context.Context, set config.Settings, prov providers.Provider, pcfg providers.Config, req *providers.Request) (string, []sideCall, error) {
	fp, fc, fast := m.sideModel(ctx, set, prov, pcfg)
	if !fast {
		text, c, err := collectText(ctx, prov, req)
		return text, []sideCall{c}, err
	}
	freq := *req
	freq.Model = fc.Model
	text, c, err := collectText(ctx, fp, &freq)
	if err == nil || ctx.Err() != nil {
		return text, []sideCall{c}, err
	}
	m.log.Warn("models.fast failed, asking the turn's model: " + err.Error())
	text, c2, err := collectText(ctx, prov, req)
	return text, []sideCall{c, c2}, err
}
