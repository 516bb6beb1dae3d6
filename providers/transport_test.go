package providers

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// The trust a localhost base URL gets rests on where it is dialled: the loopback address itself,
// never what a resolver, /etc/hosts or a search domain says "localhost" is.
func TestLocalhostIsDialledAtLoopback(t *testing.T) {
	var dialled []string
	refuse := func(_ context.Context, network, addr string) (net.Conn, error) {
		dialled = append(dialled, network+" "+addr)
		return nil, errors.New("refused")
	}
	for _, host := range []string{"localhost", "LOCALHOST", "localhost."} {
		dialled = nil
		if _, err := dialPinned(context.Background(), refuse, "tcp", net.JoinHostPort(host, "11434")); err == nil {
			t.Fatal("a refused dial succeeded")
		}
		if want := []string{"tcp4 127.0.0.1:11434", "tcp6 [::1]:11434"}; !slices.Equal(dialled, want) {
			t.Errorf("%s: dialled %q, want %q (the name must never reach a resolver)", host, dialled, want)
		}
	}
	// Every other name, subdomains of localhost included, is dialled as written.
	for _, addr := range []string{"ollama.localhost:11434", "localhost.example.com:443", "gpu-box:8080", "10.0.0.2:8080"} {
		dialled = nil
		dialPinned(context.Background(), refuse, "tcp", addr)
		if want := []string{"tcp " + addr}; !slices.Equal(dialled, want) {
			t.Errorf("dialled %q, want %q", dialled, want)
		}
	}
}

// A proxy from the environment never gets a localhost request to resolve at its end, whatever
// the spelling (net/http exempts only the exact "localhost").
func TestLocalhostNeverGoesThroughAProxy(t *testing.T) {
	proxy, _ := url.Parse("http://proxy.example:3128")
	always := func(*http.Request) (*url.URL, error) { return proxy, nil }
	direct := localhostDirect(always)
	for _, target := range []string{"http://localhost:11434/v1", "http://localhost.:11434/v1", "http://LOCALHOST:11434/v1"} {
		r, _ := http.NewRequest("GET", target, nil)
		if got, err := direct(r); got != nil || err != nil {
			t.Errorf("%s: proxied through %v (%v)", target, got, err)
		}
	}
	r, _ := http.NewRequest("GET", "https://api.example.com/v1", nil)
	if got, _ := direct(r); got != proxy {
		t.Errorf("a remote host: proxy %v, want %v", got, proxy)
	}
	if pinnedTransport().Proxy == nil {
		t.Fatal("HTTPTransport dropped the environment's proxy")
	}
}

func TestHTTPTransportReachesLocalhost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served at "+r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ep, err := CheckEndpoint("http://localhost:" + port + "/v1")
	if err != nil || !ep.Local || ep.KeyNeed != KeyNotNeeded {
		t.Fatalf("CheckEndpoint = %+v, %v; want a local endpoint that needs no key", ep, err)
	}
	resp, err := (&http.Client{Transport: HTTPTransport}).Get("http://localhost:" + port + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := string(body), "served at localhost:"+port; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}

// countingConn counts the writes to a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int32
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestRequestLeavesInOneWrite: a model request of the usual size goes to the connection in one
// write, headers and body together.
func TestRequestLeavesInOneWrite(t *testing.T) {
	body := strings.Repeat(`{"name":"read_file","description":"Read a file."},`, 25<<10/50)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != body {
			t.Errorf("server read %d bytes, want %d", len(b), len(body))
		}
	}))
	defer srv.Close()
	tr := newHTTPTransport()
	var writes atomic.Int32
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	defer tr.CloseIdleConnections()
	for range 2 {
		writes.Store(0)
		resp, err := (&http.Client{Transport: tr}).Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n := writes.Load(); n != 1 {
			t.Errorf("a %d-byte request took %d writes, want 1", len(body), n)
		}
	}
}
