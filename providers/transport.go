package providers

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPTransport carries every provider request. It is http.DefaultTransport's policy (proxy from
// the environment, keep-alives, HTTP/2) with one difference: the host name "localhost" is never
// looked up. It is dialled at the loopback address itself, 127.0.0.1 and then ::1, so the trust a
// localhost base URL gets (plain http allowed, no key expected: see CheckEndpoint) cannot be moved
// to another machine by /etc/hosts, a DNS search domain or a resolver that answers for it.
// Nor does a proxy from the environment get to resolve it: net/http exempts "localhost" itself but
// not "localhost." or "LOCALHOST", so the transport keeps every spelling of it direct.
//
// Its write buffer holds a whole request of the first turns (a request with agentd's tools is
// about 25 KB): with net/http's 4 KB, the headers went out in one write and the body in a second
// one through a 32 KB copy buffer allocated and cleared per request (or, over TLS, in 4 KB pieces,
// a record and a system call each).
//
// It is built at its first request: cloning http.DefaultTransport configures HTTP/2, code the
// daemon otherwise never runs before its first turn, and doing it at init faulted two 64 KB
// windows of net/http's code into memory at every start.
var HTTPTransport http.RoundTripper = lazyTransport{}

// lazyTransport is HTTPTransport: newHTTPTransport's transport, built at the first request.
type lazyTransport struct{}

var sharedTransport struct {
	once sync.Once
	t    atomic.Pointer[http.Transport]
}

// pinnedTransport is the one transport HTTPTransport carries requests with.
func pinnedTransport() *http.Transport {
	sharedTransport.once.Do(func() { sharedTransport.t.Store(newHTTPTransport()) })
	return sharedTransport.t.Load()
}

func (lazyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return pinnedTransport().RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of the transport if it was built
// (http.Client.CloseIdleConnections finds it by this method).
func (lazyTransport) CloseIdleConnections() {
	if t := sharedTransport.t.Load(); t != nil {
		t.CloseIdleConnections()
	}
}

// requestBuffer is the transport's write buffer per connection.
const requestBuffer = 64 << 10

func newHTTPTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.WriteBufferSize = requestBuffer
	t.Proxy = localhostDirect(t.Proxy)
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dialPinned(ctx, d.DialContext, network, addr)
	}
	return t
}

// localhostDirect is proxy, except that a request to localhost, however spelled, goes direct.
func localhostDirect(proxy func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	return func(r *http.Request) (*url.URL, error) {
		if proxy == nil || isLocalhostName(r.URL.Hostname()) {
			return nil, nil
		}
		return proxy(r)
	}
}

type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// dialPinned dials addr, except that a "localhost" host is dialled at 127.0.0.1, or at ::1 when
// nothing listens on the IPv4 loopback (servers that bind only [::1]).
func dialPinned(ctx context.Context, dial dialFunc, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !isLocalhostName(host) {
		return dial(ctx, network, addr)
	}
	c, err4 := dial(ctx, "tcp4", net.JoinHostPort("127.0.0.1", port))
	if err4 == nil {
		return c, nil
	}
	c, err6 := dial(ctx, "tcp6", net.JoinHostPort("::1", port))
	if err6 == nil {
		return c, nil
	}
	return nil, err4
}

// isLocalhostName reports whether host is "localhost", the one name agentd resolves itself (in
// any case, with or without its root dot). Its subdomains (ollama.localhost) are names like any
// other (see Endpoint).
func isLocalhostName(host string) bool {
	return strings.EqualFold(strings.TrimSuffix(host, "."), "localhost")
}
