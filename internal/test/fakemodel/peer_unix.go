//go:build unix

package fakemodel

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the client has closed c (or reset it): the end of its stream is
// waiting in the socket, whether or not a goroutine has read it yet. It peeks without taking
// the connection's read lock (RawConn.Control), which the server's background read holds.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = (err == nil && n == 0) || errors.Is(err, syscall.ECONNRESET)
	})
	return closed
}
