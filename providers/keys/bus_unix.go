//go:build !darwin && !windows

package keys

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// sessionBus says whether a D-Bus session bus is there to reach the Secret Service through,
// without starting one. Asked for the keyring with no bus address, the D-Bus library behind
// go-keyring runs dbus-launch, which leaves a new bus daemon behind on every agentd start on a
// headless machine; agentd then keeps to its file instead.
func sessionBus() error {
	return sessionBusIn(os.Getenv, os.Getuid(), func(p string) bool { _, err := os.Stat(p); return err == nil })
}

// sessionBusIn is sessionBus over its inputs: the bus address variable (as the library reads it,
// "autolaunch:" meaning none) or the sockets a login session's bus leaves in /run/user/UID.
func sessionBusIn(getenv func(string) string, uid int, exists func(string) bool) error {
	if a := getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return nil
	}
	dir := fmt.Sprintf("/run/user/%d", uid)
	if exists(filepath.Join(dir, "bus")) || exists(filepath.Join(dir, "dbus-session")) {
		return nil
	}
	return errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset), so no Secret Service")
}
