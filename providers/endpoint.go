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
	// KeyExpected: a remote host other than a vendor's own; most need a key, some gateways do
	// not, so a missing key is reported but the request is still allowed.
	KeyExpected KeyNeed = iota
	// KeyRequired: a dialect's official origin (Anthropic's, OpenAI's, Gemini's API), which
	// answers 401 to every keyless request; the turn fails before any request is sent.
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
	// Origin is scheme://host[:port], lowercased, the port written only when it is not the
	// scheme's default (the web's serialization: https://api.openai.com). A stored key is bound
	// to it.
	Origin string
	// Local is true for loopback and private address literals: 127.0.0.0/8, ::1, RFC 1918,
	// link-local, IPv6 ULA (fc00::/7); and for the name "localhost", which HTTPTransport dials at
	// the loopback address itself and never looks up. Any other name is never local, not
	// *.localhost, *.internal or a bare LAN name: what it resolves to is up to DNS, /etc/hosts or
	// whoever answers on the network, so it cannot vouch for where the key and the code go.
	Local   bool
	KeyNeed KeyNeed
	// PlainHTTP is true when the scheme is http (allowed only when Local); callers tell the user
	// once that the traffic is unencrypted.
	PlainHTTP bool
}

// CheckEndpoint parses and vets a provider base URL. It refuses anything but http and https,
// URLs that embed credentials, and plain http to a host that is neither loopback nor private,
// because the key and the user's code would then cross the network unencrypted.
func CheckEndpoint(baseURL string) (Endpoint, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return Endpoint{}, &EndpointError{URL: baseURL, Msg: "the base URL is not a valid URL: " + strings.TrimPrefix(err.Error(), "parse ")}
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Endpoint{}, &EndpointError{URL: baseURL, Msg: fmt.Sprintf("the base URL %q must start with https:// (or http:// for a loopback or private address)", baseURL)}
	}
	if u.User != nil {
		return Endpoint{}, &EndpointError{URL: redactUser(u), Msg: fmt.Sprintf("the base URL %q contains a user name or password; store the key with `agentd key set ORIGIN` or name its variable in apiKeyEnv, so it is never written into a URL", redactUser(u))}
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "" {
		return Endpoint{}, &EndpointError{URL: baseURL, Msg: fmt.Sprintf("the base URL %q has no host name", baseURL)}
	}
	ep := Endpoint{
		Origin:    origin(scheme, host, u.Port()),
		Local:     isLocalHost(host),
		PlainHTTP: scheme == "http",
	}
	if ep.Local {
		ep.KeyNeed = KeyNotNeeded
	}
	if ep.PlainHTTP && !ep.Local {
		hint := ""
		if _, err := netip.ParseAddr(host); err != nil {
			hint = " (agentd counts a host as local only by its address or the name localhost: write 127.0.0.1, localhost or the server's private IP instead)"
		}
		return ep, &EndpointError{URL: baseURL, Msg: fmt.Sprintf("agentd refuses plain http to %s: prompts, code and any key would cross the network unencrypted; use https, or plain http only to a loopback or private address%s", host, hint)}
	}
	return ep, nil
}

// EndpointError is a base URL agentd refuses before sending anything: bad syntax, credentials
// in it, plain http to a public host. It is a settings mistake, never an authentication failure.
type EndpointError struct {
	URL string
	Msg string
}

func (e *EndpointError) Error() string { return e.Msg }

// origin serializes an origin as the web does: the port only when it is not the scheme's default.
func origin(scheme, host, port string) string {
	h := normalizeHost(host)
	if port == "" || scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		if strings.Contains(h, ":") {
			return scheme + "://[" + h + "]"
		}
		return scheme + "://" + h
	}
	return scheme + "://" + net.JoinHostPort(h, port)
}

// Origin returns the normalized origin (scheme://host[:port]) of rawURL, or "" when it is not an
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
	return origin(scheme, host, u.Port())
}

// KeyAllowed reports whether a key saved for savedOrigin may be sent to targetURL: only when
// both name the same origin (scheme, host and port; a default port written out or not is the
// same). savedOrigin may be an origin or any URL
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

// isLocalHost reports whether host (lowercase, without brackets or port) is a loopback,
// RFC 1918, link-local or unique-local address literal, or "localhost" (pinned to loopback by
// HTTPTransport). Other names are never local (see Endpoint).
func isLocalHost(host string) bool {
	if isLocalhostName(host) {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	return a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast()
}

// IsLoopbackHost reports whether host (without brackets or port) is a loopback address literal or
// localhost, which HTTPTransport dials at the loopback address: traffic to it never leaves the
// machine.
func IsLoopbackHost(host string) bool {
	if isLocalhostName(host) {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
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
