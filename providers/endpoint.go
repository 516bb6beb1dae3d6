package providers

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// KeyNeed says whether a provider endpoint needs an API key.
type KeyNeed uint8

const (
	// KeyExpected: a remote host other than OpenAI's own; most need a key, some gateways do not,
	// so a missing key is reported but the request is still allowed.
	KeyExpected KeyNeed = iota
	// KeyRequired: OpenAI's own host, which answers 401 to every keyless request.
	KeyRequired
	// KeyNotNeeded: a loopback or private address (Ollama, LM Studio, llama-server); with no key
	// no Authorization header is sent at all.
	KeyNotNeeded
)

func (k KeyNeed) String() string {
	switch k {
	case KeyRequired:
		return "required"
	case KeyExpected:
		return "expected"
	case KeyNotNeeded:
		return "not_needed"
	}
	return fmt.Sprintf("keyneed(%d)", k)
}

// Endpoint is what agentd concluded about a provider's base URL before sending anything to it.
type Endpoint struct {
	// Origin is scheme://host:port, lowercased, with the port always written out. A stored key
	// is bound to it.
	Origin string
	// Local is true for loopback and private addresses: 127.0.0.0/8, ::1, localhost, RFC 1918,
	// link-local, IPv6 ULA (fc00::/7), bare LAN host names without a dot and the local-only
	// suffixes .local (mDNS), .localhost, .home.arpa and .internal.
	Local   bool
	KeyNeed KeyNeed
	// PlainHTTP is true when the scheme is http (allowed only when Local); callers tell the user
	// once that the traffic is unencrypted.
	PlainHTTP bool
}

// openAIHosts are the hosts where a key is required, not merely expected.
var openAIHosts = map[string]bool{"api.openai.com": true}

// CheckEndpoint parses and vets a provider base URL. It refuses anything but http and https,
// URLs that embed credentials, and plain http to a host that is neither loopback nor private,
// because the key and the user's code would then cross the network unencrypted.
func CheckEndpoint(baseURL string) (Endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return Endpoint{}, fmt.Errorf("the base URL %q is not a valid URL: %v", baseURL, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Endpoint{}, fmt.Errorf("the base URL %q must start with https:// (or http:// for a server on this machine or your local network)", baseURL)
	}
	if u.User != nil {
		return Endpoint{}, fmt.Errorf("the base URL %q contains a user name or password; put the key in the provider's settings instead, so it is never written into a URL", redactUser(u))
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return Endpoint{}, fmt.Errorf("the base URL %q has no host name", baseURL)
	}
	port := u.Port()
	if port == "" {
		if scheme == "https" {
			port = "443"
		} else {
			port = "80"
		}
	}
	ep := Endpoint{
		Origin:    scheme + "://" + net.JoinHostPort(normalizeHost(host), port),
		Local:     isLocalHost(host),
		PlainHTTP: scheme == "http",
	}
	switch {
	case ep.Local:
		ep.KeyNeed = KeyNotNeeded
	case openAIHosts[host]:
		ep.KeyNeed = KeyRequired
	default:
		ep.KeyNeed = KeyExpected
	}
	if ep.PlainHTTP && !ep.Local {
		return ep, fmt.Errorf("agentd refuses plain http to %s: the API key and your code would cross the network unencrypted; use https, or plain http only to this machine or a private address", host)
	}
	return ep, nil
}

// Origin returns the normalized origin (scheme://host:port) of rawURL, or "" when it is not an
// http(s) URL with a host.
func Origin(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if (scheme != "http" && scheme != "https") || host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(normalizeHost(host), port)
}

// KeyAllowed reports whether a key saved for savedOrigin may be sent to targetURL: only when
// both name the same origin (scheme, host and port). savedOrigin may be an origin or any URL
// under it.
func KeyAllowed(savedOrigin, targetURL string) bool {
	a, b := Origin(savedOrigin), Origin(targetURL)
	return a != "" && a == b
}

// credentialHeaders are the request headers that carry a key in any dialect agentd speaks.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Cookie"}

// ErrCrossOriginRedirect is returned (wrapped) by CheckRedirect when a server redirects a request
// to another origin.
var ErrCrossOriginRedirect = errors.New("redirect to another origin refused")

// CheckRedirect is an http.Client CheckRedirect policy for provider clients: redirects within
// the origin of the first request are followed (at most 5), a redirect to any other origin is
// refused, so a key bound to one origin is never sent to another, not even by a redirect. As a
// second line of defence the credential headers are stripped from a cross-origin request before
// the error is returned.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	from, to := Origin(via[0].URL.String()), Origin(req.URL.String())
	if from == "" || from != to {
		for _, h := range credentialHeaders {
			req.Header.Del(h)
		}
		return fmt.Errorf("the server at %s redirected to %s; agentd does not follow it so the key is not sent there (set the base URL to the new address if it is right): %w", from, to, ErrCrossOriginRedirect)
	}
	return nil
}

// isLocalHost reports whether host (lowercase, without brackets or port) is loopback or private.
func isLocalHost(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsUnspecified()
	}
	if strings.HasPrefix(host, "[") || strings.Contains(host, "%") {
		return false
	}
	if !strings.Contains(host, ".") {
		// localhost, or a bare LAN name such as "gpu-box" that only local resolution answers.
		return true
	}
	for _, suffix := range []string{".localhost", ".local", ".home.arpa", ".internal"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}

// normalizeHost writes IPv6 literals in their canonical form so two spellings of one address
// give one origin.
func normalizeHost(host string) string {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.String()
	}
	return host
}

func redactUser(u *url.URL) string {
	c := *u
	c.User = url.User("…")
	return c.String()
}
