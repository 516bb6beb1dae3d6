package keys

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// Status says whether a provider has the key it needs.
type Status string

const (
	StatusSet       Status = "set"
	StatusMissing   Status = "missing"
	StatusNotNeeded Status = "not_needed"
)

// ClientKey is the name a provider's key is asked for in the client's secret store
// (agent/x/secrets/get): "agentd.apiKey." + the origin, so a key the client saved for one server
// is never sent to another, whatever the provider entry's base URL says later.
func ClientKey(origin string) string { return "agentd.apiKey." + origin }

// Headers are agent/providers/set headers, held in memory and bound to the origin they were set
// for.
type Headers struct {
	Origin  string
	Headers map[string]string
}

// Resolver finds a configured provider's key for its origin. The sources, in order:
//
//  1. agent/providers/set headers, only for the origin they were set for;
//  2. the environment: the variable Target names (apiKeyEnv, else the conventional or preset
//     variable whose own origin this is);
//  3. agentd's own store, by origin;
//  4. the client's store, asked for ClientKey(origin).
type Resolver struct {
	Registry *providers.Registry
	// Store is agentd's own store (nil: none).
	Store Store
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// Client asks the client's secret store; nil when the client serves none.
	Client func(ctx context.Context, key string) (string, bool, error)
	// OnError hears lookups that failed (a store that cannot be read); the lookup goes on.
	OnError func(source string, err error)
}

// Resolved is a provider's configuration with its key and where the key came from.
type Resolved struct {
	Config providers.Config
	Target providers.Target
	Status Status
	// Source names where the key came from ("env OPENAI_API_KEY"), never the key.
	Source string
}

// Resolve resolves provider id with settings ps. set holds its providers/set headers, if any.
// askClient false skips the client's store (agent/providers/list inside initialize, before the
// client can answer). Settings errors are *config.KeyError naming providers.ID.KEY.
func (r *Resolver) Resolve(ctx context.Context, id string, ps config.ProviderSettings, set *Headers, askClient bool) (Resolved, error) {
	t, err := r.Registry.Target(id, ps)
	out := Resolved{Config: providers.Config{ID: id, APIType: ps.APIType, BaseURL: t.BaseURL, Model: ps.Model, FirstByteTimeout: ps.FirstByteWait(), OutputSchema: ps.OutputSchema}, Target: t}
	if err != nil {
		if ke, ok := err.(*config.KeyError); ok {
			return out, &config.KeyError{Key: "providers." + id + "." + ke.Key, Msg: ke.Msg}
		}
		return out, err
	}
	if !t.NeedsNetwork {
		out.Status = StatusNotNeeded
		return out, nil
	}
	origin := t.Endpoint.Origin
	if set != nil && set.Origin == origin {
		out.Config.Headers = set.Headers
		for k := range set.Headers {
			if IsCredentialHeader(k) {
				out.Status, out.Source = StatusSet, "providers/set"
				return out, nil
			}
		}
	}
	if t.KeyEnv != "" {
		if v := r.getenv(t.KeyEnv); v != "" {
			out.Config.APIKey, out.Status, out.Source = v, StatusSet, "env "+t.KeyEnv
			return out, nil
		}
	}
	if r.Store != nil {
		v, ok, err := r.Store.Get(origin)
		if err != nil && r.OnError != nil {
			r.OnError("agentd secret store", err)
		}
		if ok {
			out.Config.APIKey, out.Status, out.Source = v, StatusSet, "agentd secret store"
			return out, nil
		}
	}
	if askClient && r.Client != nil {
		v, ok, err := r.Client(ctx, ClientKey(origin))
		if err != nil && r.OnError != nil {
			r.OnError("client secret store", err)
		}
		if ok && v != "" {
			out.Config.APIKey, out.Status, out.Source = v, StatusSet, "client secret store"
			return out, nil
		}
	}
	if t.Endpoint.KeyNeed == providers.KeyNotNeeded {
		out.Status = StatusNotNeeded
	} else {
		out.Status = StatusMissing
	}
	return out, nil
}

// MissingKey is the typed error for a provider at an origin that requires a key and has none:
// the turn fails with it before any request is sent. nil when the key is there or not required.
func (res Resolved) MissingKey() *providers.Error {
	if res.Status != StatusMissing || res.Target.Endpoint.KeyNeed != providers.KeyRequired {
		return nil
	}
	origin := res.Target.Endpoint.Origin
	return &providers.Error{Kind: providers.ErrAuth, Message: fmt.Sprintf(
		"provider %q needs an API key for %s and none was found: set %s, or run `agentd key set %s` (or store one in the editor)",
		res.Config.ID, origin, res.Target.KeyHint, origin)}
}

func (r *Resolver) getenv(k string) string {
	if r.Getenv != nil {
		return r.Getenv(k)
	}
	return os.Getenv(k)
}

// IsCredentialHeader reports whether a request header carries a key in a dialect agentd speaks.
func IsCredentialHeader(k string) bool {
	switch http.CanonicalHeaderKey(k) {
	case "Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Cookie":
		return true
	}
	return false
}

// IsSecretHeader reports whether a header's value must be kept out of what the user and the
// model see: a credential header of a known dialect, or a custom one whose name says it holds
// a secret (X-Custom-Token, Private-Token, X-Auth, X-Client-Secret, X-Session-Id, …), which a
// gateway in front of a provider may require and echo back in an error.
func IsSecretHeader(k string) bool {
	if IsCredentialHeader(k) {
		return true
	}
	n := strings.ToLower(k)
	for _, w := range []string{"token", "key", "secret", "auth", "pass", "session", "cookie", "signature", "credential", "jwt"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
