package completion

import (
	"context"
	"time"

	"github.com/agentd-dev/agentd/providers"
)

// resolveFor bounds how long a resolved provider serves completions. Within it a key changed
// where agentd is not told (the editor's secret store, `agentd key set` in another process) is
// not seen; a model call that fails (a key refused, a server gone) drops the resolution at once.
const resolveFor = 30 * time.Second

// resolution is the provider the engine resolved last, and what it was resolved for.
type resolution struct {
	id   string
	rev  uint64
	at   time.Time
	prov providers.Provider
	cfg  providers.Config
}

// resolve returns the provider id names. Resolving asks for the key (agentd's secret store, a
// file read, then the editor's, a round trip over the pipe): per keystroke that was one more
// pipe round trip and file read per completion, so the engine reuses its last resolution while
// Revision says nothing changed, for at most resolveFor and until a model call fails. Without
// Revision it resolves every time.
func (e *Engine) resolve(ctx context.Context, id string) (providers.Provider, providers.Config, error) {
	if e.Revision == nil {
		return e.Resolve(ctx, id)
	}
	// Read before resolving: a change that lands during the resolution makes the next request
	// resolve again rather than keep what may predate it.
	rev, now := e.Revision(), e.now()
	e.mu.Lock()
	r := e.resolved
	e.mu.Unlock()
	if r != nil && r.id == id && r.rev == rev && now.Sub(r.at) < resolveFor && now.Sub(r.at) >= 0 {
		return r.prov, r.cfg, nil
	}
	prov, cfg, err := e.Resolve(ctx, id)
	if err != nil {
		return prov, cfg, err
	}
	e.mu.Lock()
	e.resolved = &resolution{id: id, rev: rev, at: now, prov: prov, cfg: cfg}
	e.mu.Unlock()
	return prov, cfg, nil
}

// dropResolved makes the next request resolve the provider again (a model call failed).
func (e *Engine) dropResolved() {
	e.mu.Lock()
	e.resolved = nil
	e.mu.Unlock()
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}
