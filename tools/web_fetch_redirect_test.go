package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentd-dev/agentd/tools/web"
)

// twoHosts serves "docs.test" (which redirects as redirect says) and "other.test" on two loopback
// listeners; the fetcher resolves both names to 127.0.0.1 and lets connections through to those
// two ports only.
type twoHosts struct {
	docs, other *httptest.Server
	otherHits   atomic.Int32
	fetcher     *web.Fetcher
}

func newTwoHosts(t *testing.T, redirect func(w http.ResponseWriter, r *http.Request, other string)) *twoHosts {
	th := &twoHosts{}
	th.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		th.otherHits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "other got %s", r.URL.RequestURI())
	}))
	t.Cleanup(th.other.Close)
	ou, _ := url.Parse(th.other.URL)
	otherBase := "http://other.test:" + ou.Port()
	th.docs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/final" {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "docs final")
			return
		}
		redirect(w, r, otherBase)
	}))
	t.Cleanup(th.docs.Close)
	ports := map[int]bool{}
	for _, s := range []*httptest.Server{th.docs, th.other} {
		u, _ := url.Parse(s.URL)
		p, _ := strconv.Atoi(u.Port())
		ports[p] = true
	}
	th.fetcher = &web.Fetcher{
		Check: func(ap netip.AddrPort) error {
			if ap.Addr().Unmap() == netip.MustParseAddr("127.0.0.1") && ports[int(ap.Port())] {
				return nil
			}
			return web.CheckAddr(ap.Addr())
		},
		LookupNetIP: func(ctx context.Context, host string) ([]netip.Addr, error) {
			if host == "docs.test" || host == "other.test" {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		},
	}
	return th
}

func (th *twoHosts) docsURL(path string) string {
	u, _ := url.Parse(th.docs.URL)
	return "http://docs.test:" + u.Port() + path
}

// askLog answers each question by host and records the hosts asked about.
type askLog struct {
	mu    sync.Mutex
	hosts []string
	allow map[string]bool
}

func (a *askLog) permit(ctx context.Context, req PermissionRequest) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hosts = append(a.hosts, req.Host)
	if !a.allow[req.Host] {
		return &ErrDenied{Reason: "the user refused " + req.Host}
	}
	return nil
}

// The user allows docs.test; its open redirect must not carry the model's URL to other.test
// unasked. Refused, other.test gets no request at all; allowed, the page comes from there.
func TestWebFetchAsksAboutEachHostARedirectReaches(t *testing.T) {
	th := newTwoHosts(t, func(w http.ResponseWriter, r *http.Request, other string) {
		http.Redirect(w, r, other+"/collect?secret="+url.QueryEscape(r.URL.Query().Get("q")), http.StatusFound)
	})
	h := newHarness(t, nil)
	h.env.Fetcher = th.fetcher

	asks := &askLog{allow: map[string]bool{"docs.test": true}}
	h.env.Permit = asks.permit
	mustErr(t, h.run("web_fetch", map[string]any{"url": th.docsURL("/go?q=project-secret")}), "other.test")
	if th.otherHits.Load() != 0 {
		t.Fatalf("the redirect reached other.test %d times though the user refused it", th.otherHits.Load())
	}
	if fmt.Sprint(asks.hosts) != "[docs.test other.test]" {
		t.Fatalf("asked about %v, want docs.test then other.test", asks.hosts)
	}

	asks = &askLog{allow: map[string]bool{"docs.test": true, "other.test": true}}
	h.env.Permit = asks.permit
	r := mustOK(t, h.run("web_fetch", map[string]any{"url": th.docsURL("/go?q=ok")}))
	mustContain(t, r.Output, "other got /collect?secret=ok", "URL: http://other.test:")
	if fmt.Sprint(asks.hosts) != "[docs.test other.test]" {
		t.Fatalf("asked about %v, want docs.test then other.test", asks.hosts)
	}
}

// A redirect within the allowed host is followed without a second question, and one that comes
// back to a host already allowed in this fetch is not asked about again.
func TestWebFetchRedirectWithinTheHostDoesNotAsk(t *testing.T) {
	th := newTwoHosts(t, func(w http.ResponseWriter, r *http.Request, other string) {
		http.Redirect(w, r, "/final", http.StatusMovedPermanently)
	})
	h := newHarness(t, nil)
	h.env.Fetcher = th.fetcher
	asks := &askLog{allow: map[string]bool{"docs.test": true}}
	h.env.Permit = asks.permit
	r := mustOK(t, h.run("web_fetch", map[string]any{"url": th.docsURL("/start")}))
	mustContain(t, r.Output, "docs final")
	if fmt.Sprint(asks.hosts) != "[docs.test]" {
		t.Fatalf("asked about %v, want docs.test once", asks.hosts)
	}
}
