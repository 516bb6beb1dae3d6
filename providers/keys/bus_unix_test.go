//go:build !darwin && !windows

package keys

import (
	"strings"
	"testing"
)

// Without a session bus the keyring is not probed at all: the probe would make the D-Bus library
// start one with dbus-launch.
func TestNoSessionBusMeansNoKeyringProbe(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "DBUS_SESSION_BUS_ADDRESS" {
				return v
			}
			return ""
		}
	}
	none := func(string) bool { return false }
	only := func(want string) func(string) bool { return func(p string) bool { return p == want } }
	for _, c := range []struct {
		name   string
		getenv func(string) string
		exists func(string) bool
		ok     bool
	}{
		{"address set", env("unix:path=/run/user/1000/bus"), none, true},
		{"login session socket", env(""), only("/run/user/1000/bus"), true},
		{"session address file", env(""), only("/run/user/1000/dbus-session"), true},
		{"nothing", env(""), none, false},
		{"autolaunch is not an address", env("autolaunch:"), none, false},
		{"another user's socket", env(""), only("/run/user/1001/bus"), false},
	} {
		err := sessionBusIn(c.getenv, 1000, c.exists)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "no D-Bus session bus") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
