package httpsse

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/agentd-dev/agentd/providers"
)

// BaseURL is the base URL a dialect whose paths carry their own API version builds them on:
// configured without its trailing slashes and without a trailing version segment (so ".../v1"
// and "..." mean the same), or def when nothing is configured. A base that does not parse is
// refused.
func BaseURL(configured, def, version string) (string, error) {
	base := strings.TrimRight(configured, "/")
	if base == "" {
		base = def
	}
	base = strings.TrimSuffix(base, version)
	if _, err := url.Parse(base); err != nil {
		return "", err
	}
	return base, nil
}

// Header is the header every request of cfg starts with: the configured headers, then the API
// key, when there is one, under keyHeader (it wins over a configured header of that name).
func Header(cfg providers.Config, keyHeader string) http.Header {
	h := http.Header{}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	if cfg.APIKey != "" {
		h.Set(keyHeader, cfg.APIKey)
	}
	return h
}
