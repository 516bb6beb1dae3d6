package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/internal/clip"
)

// Limits of one fetch.
const (
	DefaultMaxBytes     = 2 << 20   // read at most this much of a body
	DefaultMaxText      = 100 << 10 // return at most this much text
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 5
)

// Fetcher fetches pages. The zero value applies the default limits and address policy.
type Fetcher struct {
	// Check decides whether a connection may go to an address, after DNS, for every connection
	// and redirect hop; nil means CheckAddr on the address. Tests inject one that also lets
	// their own server through, by port.
	Check        func(netip.AddrPort) error
	MaxBytes     int64
	MaxText      int
	Timeout      time.Duration
	MaxRedirects int
	// UserAgent is sent with every request; empty means "agentd".
	UserAgent string
	// LookupNetIP resolves a host name; nil means the system resolver. Tests inject one that
	// answers a name with a forbidden address, as a rebinding DNS server would.
	LookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Page is a fetched page reduced to text.
type Page struct {
	// URL is the address the text came from, after redirects.
	URL         string
	Status      int
	ContentType string
	Title       string
	Text        string
	// Truncated says the body was longer than the read cap or the text longer than the text cap.
	Truncated bool
}

func (f *Fetcher) check(ap netip.AddrPort) error {
	if f.Check != nil {
		return f.Check(ap)
	}
	return CheckAddr(ap.Addr())
}

// control is the dialer's Control hook: it runs for every connection, on the address about to be
// dialed, so neither a DNS answer nor a redirect nor a second resolution (DNS rebinding) can take
// a connection anywhere the policy refuses.
func (f *Fetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %q", ErrForbiddenAddress, address)
	}
	return f.check(ap)
}

// dial resolves the host and dials its addresses in turn; the dialer's Control hook checks each
// one as it is dialed, which is the check that counts (a name resolved here may resolve
// differently inside another dialer, never inside this one).
func (f *Fetcher) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lookup := f.LookupNetIP
		if lookup == nil {
			lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		if addrs, err = lookup(ctx, host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%s has no address", host)
		}
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: f.control}
	var first error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// RedirectError is Fetch stopping at a redirect its caller's follow did not accept: To is where
// the server sent the request next, and nothing was sent there.
type RedirectError struct {
	From, To *url.URL
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("%s redirected to %s", e.From.Redacted(), e.To.Redacted())
}

func (f *Fetcher) client(follow func(to *url.URL) bool) *http.Client {
	tr := &http.Transport{
		// Never a proxy from the environment: the check must see the address the request goes to.
		Proxy:                 nil,
		DialContext:           f.dial,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
		DisableCompression:    false,
	}
	maxRedirects := f.MaxRedirects
	if maxRedirects <= 0 {
		maxRedirects = DefaultMaxRedirects
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if err := f.checkURL(req.URL); err != nil {
				return err
			}
			if follow != nil && !follow(req.URL) {
				return &RedirectError{From: via[len(via)-1].URL, To: req.URL}
			}
			return nil
		},
	}
}

// checkURL is the check before any connection: the scheme, and a host that is an address or a
// numeric form of one. The dial-time check stays the one that counts.
func (f *Fetcher) checkURL(u *url.URL) error {
	switch u.Scheme {
	case "http", "https":
	default:
		return fmt.Errorf("only http and https URLs can be fetched, not %q", u.Scheme)
	}
	if u.User != nil {
		return errors.New("URLs with a user name or password are not fetched")
	}
	port := uint16(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return fmt.Errorf("the port %q is not a number", p)
		}
		port = uint16(n)
	}
	return checkHost(u.Hostname(), f.check, port)
}

// CheckURL says, before any connection, whether raw may be fetched: its scheme, and a host that
// is an address (or a numeric form of one) the policy refuses. A name is judged when it is
// dialed.
func (f *Fetcher) CheckURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("not a valid URL: %v", err)
	}
	return f.checkURL(u)
}

// Fetch gets one page. A refused address, a redirect to one, a non-2xx status or a body that is
// not text is an error; a body past the caps is cut and the page says so.
func (f *Fetcher) Fetch(ctx context.Context, raw string) (*Page, error) {
	return f.FetchFollowing(ctx, raw, nil)
}

// FetchFollowing is Fetch that follows a redirect only where follow accepts its target (nil
// accepts every target the address policy allows). At any other it stops before sending
// anything there and returns a *RedirectError naming the target, so that the caller can ask
// about it (outside this fetch's time limit) and fetch the target itself.
func (f *Fetcher) FetchFollowing(ctx context.Context, raw string, follow func(to *url.URL) bool) (*Page, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("not a valid URL: %v", err)
	}
	if err := f.checkURL(u); err != nil {
		return nil, err
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("not a valid URL: %v", err)
	}
	ua := f.UserAgent
	if ua == "" {
		ua = "agentd"
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1")
	c := f.client(follow)
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		if re := (*RedirectError)(nil); errors.As(err, &re) {
			return nil, re
		}
		return nil, explain(err, timeout)
	}
	defer resp.Body.Close()
	maxBytes := f.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, explain(err, timeout)
	}
	p := &Page{URL: resp.Request.URL.String(), Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if int64(len(body)) > maxBytes {
		body, p.Truncated = body[:maxBytes], true
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s answered HTTP %d %s", p.URL, resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	mt, _, _ := mime.ParseMediaType(p.ContentType)
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || (mt == "" && looksHTML(body)):
		p.Title, p.Text = HTMLText(body)
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		strings.HasSuffix(mt, "+xml") || mt == "application/xml" || mt == "application/javascript" || mt == "":
		if !utf8.Valid(body) && !p.Truncated {
			return nil, fmt.Errorf("%s is not text (%s)", p.URL, orUnknown(mt))
		}
		p.Text = strings.ToValidUTF8(string(body), "\uFFFD")
	default:
		return nil, fmt.Errorf("%s is %s, not a text page; web_fetch reads HTML and text only", p.URL, orUnknown(mt))
	}
	maxText := f.MaxText
	if maxText <= 0 {
		maxText = DefaultMaxText
	}
	if len(p.Text) > maxText {
		p.Text, p.Truncated = clip.String(p.Text, maxText, ""), true
	}
	return p, nil
}

func orUnknown(mt string) string {
	if mt == "" {
		return "of an unknown type"
	}
	return mt
}

func looksHTML(b []byte) bool {
	head := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 512)])))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

// explain turns a transport error into one sentence: a refused address keeps its reason.
func explain(err error, timeout time.Duration) error {
	if errors.Is(err, ErrForbiddenAddress) {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return fmt.Errorf("refused: %w", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("the page did not load within %s", timeout)
	}
	return err
}
