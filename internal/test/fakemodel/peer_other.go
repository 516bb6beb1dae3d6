//go:build !unix

package fakemodel

import "net"

// peerClosed is not known here: a request counts as in flight until its handler notices.
func peerClosed(net.Conn) bool { return false }
