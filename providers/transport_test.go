package providers

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
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
