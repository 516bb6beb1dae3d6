// Package web fetches one page of the public web for the web_fetch tool and reduces it to text.
// The model chooses the URL, and a page's text goes back to the model, so a fetch is a way out of
// the machine (a URL can carry the project's secrets to any host) and a way in to whatever the
// machine can reach that the internet cannot: the loopback interface, the local network, a cloud
// metadata service. The second is what this package refuses: every connection, redirects
// included, is checked on the address it actually dials, after DNS, in the dialer's Control hook,
// so a name that resolves to 127.0.0.1 (or is re-resolved to it between a check and a dial)
// never gets a request. The first is the permission question the tool asks in ask mode.
package web

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
)

// ErrForbiddenAddress is the error every refused address wraps.
var ErrForbiddenAddress = errors.New("address not allowed")

// ranges are the fixed addresses and networks CheckAddr refuses by name, parsed at the first
// check: parsed at package level, they were 15 parses in the package's init at every start of
// the daemon, which fetches nothing until a model asks.
var ranges = sync.OnceValue(func() *addrRanges {
	return &addrRanges{
		blocked: []netip.Prefix{
			netip.MustParsePrefix("0.0.0.0/8"),       // "this network": 0.0.0.0 reaches the local host on Linux
			netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT, shared address space
			netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
			netip.MustParsePrefix("192.0.2.0/24"),    // documentation
			netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
			netip.MustParsePrefix("198.51.100.0/24"), // documentation
			netip.MustParsePrefix("203.0.113.0/24"),  // documentation
			netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
			netip.MustParsePrefix("100::/64"),        // discard
			netip.MustParsePrefix("2001:db8::/32"),   // documentation
			netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
		},
		metadata: []netip.Addr{
			netip.MustParseAddr("169.254.169.254"),
			netip.MustParseAddr("fd00:ec2::254"),
		},
		nat64:     netip.MustParsePrefix("64:ff9b::/96"),
		sixToFour: netip.MustParsePrefix("2002::/16"),
	}
})

type addrRanges struct {
	// blocked are the ranges no fetch may reach beyond what netip's predicates name: networks
	// that are private or special-purpose without being loopback, private or link-local in
	// netip's sense.
	blocked []netip.Prefix
	// metadata are the cloud instance metadata services, named apart so the error says what
	// they are (both are inside ranges refused anyway: link-local and unique-local).
	metadata []netip.Addr
	// nat64 and sixToFour embed an IPv4 address in an IPv6 one; the embedded address is checked
	// too, or [64:ff9b::7f00:1] would be a way to 127.0.0.1 through a NAT64 gateway.
	nat64, sixToFour netip.Prefix
}

// CheckAddr is the default address policy: it refuses loopback, private, link-local, unspecified,
// multicast, metadata and other special-purpose addresses, IPv4-mapped and embedded forms
// included, and allows the rest (the public internet).
func CheckAddr(a netip.Addr) error {
	a = a.Unmap().WithZone("")
	r := ranges()
	for _, m := range r.metadata {
		if a == m {
			return fmt.Errorf("%w: %s is a cloud metadata service", ErrForbiddenAddress, a)
		}
	}
	what := ""
	switch {
	case !a.IsValid():
		what = "not an IP address"
	case a.IsLoopback():
		what = "a loopback address (this machine)"
	case a.IsUnspecified():
		what = "the unspecified address (this machine)"
	case a.IsPrivate():
		what = "a private network address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		what = "a link-local address"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		what = "a multicast address"
	}
	if what == "" {
		for _, p := range r.blocked {
			if p.Contains(a) {
				what = "a special-purpose address (" + p.String() + ")"
				break
			}
		}
	}
	if what == "" && a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case r.nat64.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case r.sixToFour.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if err := CheckAddr(v4); err != nil {
				return fmt.Errorf("%w: %s embeds %s", ErrForbiddenAddress, a, v4)
			}
		}
	}
	if what != "" {
		return fmt.Errorf("%w: %s is %s", ErrForbiddenAddress, a, what)
	}
	return nil
}

// checkHost refuses, before any lookup, a host that is an address this policy refuses or a
// number in a form browsers and C resolvers read as an IPv4 address while Go does not
// ("2130706433", "0177.0.0.1", "0x7f.1"): such a host is either an attempt to slip past a check
// or a typo, and the dial-time check would catch the first anyway if a resolver turned it into
// an address.
func checkHost(host string, check func(netip.AddrPort) error, port uint16) error {
	h := strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if h == "" {
		return errors.New("the URL has no host")
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return check(netip.AddrPortFrom(a, port))
	}
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return fmt.Errorf("%w: %s is this machine", ErrForbiddenAddress, host)
	}
	labels := strings.Split(h, ".")
	if numericLabel(labels[len(labels)-1]) {
		return fmt.Errorf("%w: %q is a number in a non-standard IP address form", ErrForbiddenAddress, host)
	}
	return nil
}

// numericLabel reports whether a host's last label is a number (decimal, octal or 0x hex), which
// the WHATWG URL standard reads as an IPv4 address; no real top-level domain is one.
func numericLabel(s string) bool {
	if s == "" {
		return false
	}
	ls := strings.ToLower(s)
	if strings.HasPrefix(ls, "0x") {
		for _, c := range ls[2:] {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return true
	}
	for _, c := range ls {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
