package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Stdio runs Cmd and speaks to it over its stdin and stdout, a message a line. Close closes its
// stdin, waits TerminateDuration for it to exit, then sends SIGTERM, waits again, then kills
// it (the SDK's CommandTransport, whose default wait is 5 s).
type Stdio struct {
	Cmd               *exec.Cmd
	TerminateDuration time.Duration
}

func (t *Stdio) connect(_ context.Context, s *Session) (conn, error) {
	stdout, err := t.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.Cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.Cmd.Start(); err != nil {
		return nil, err
	}
	td := t.TerminateDuration
	if td <= 0 {
		td = 5 * time.Second
	}
	return startStdio(s, t.Cmd, stdout, stdin, td), nil
}

// startStdio makes the connection over r and w (cmd's pipes, or a test's, with cmd nil) and
// starts reading.
func startStdio(s *Session, cmd *exec.Cmd, r io.Reader, w io.WriteCloser, td time.Duration) *stdioConn {
	c := &stdioConn{cmd: cmd, stdin: w, td: td, wmu: make(chan struct{}, 1)}
	s.conn = c
	go c.read(s, r)
	return c
}

type stdioConn struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	td    time.Duration
	wmu   chan struct{} // the write lock, taken with a context

	closeOnce sync.Once
	closeErr  error
}

// ErrTooLong is the read error of a message over the size limit.
var ErrTooLong = errors.New("a message from the MCP server exceeded the size limit")

// read hands each line to the session until the end of the child's output, then ends the
// session and reaps the child.
func (c *stdioConn) read(s *Session, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br, s.opts.MaxMessage)
		if err != nil {
			break
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			s.receive(line)
		}
	}
	if errors.Is(err, ErrTooLong) {
		err = fmt.Errorf("%w (%d MiB); the connection is closed", err, s.opts.MaxMessage>>20)
	} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		err = io.EOF
	}
	s.end(err)
	_ = c.close()
}

// readLine reads one line of at most max bytes (its end not counted). A longer line is
// ErrTooLong: nothing of it is kept, and the connection, whose framing is now unknown, ends.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		if len(line)+len(frag) > max+2 { // "\r\n"
			return nil, ErrTooLong
		}
		if err == nil {
			if line == nil {
				return frag, nil // valid until the next read; receive copies what it keeps
			}
			return append(line, frag...), nil
		}
		if err != bufio.ErrBufferFull {
			if len(line)+len(frag) > 0 && err == io.EOF {
				return append(line, frag...), nil // a last line without its end
			}
			return nil, err
		}
		line = append(line, frag...)
	}
}

func (c *stdioConn) send(ctx context.Context, msg []byte, _ int64) error {
	select {
	case c.wmu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.wmu }()
	// One write of the message and its newline, so a message is never split by another's.
	_, err := c.stdin.Write(append(msg, '\n'))
	return err
}

func (c *stdioConn) initialized(string) {}
func (c *stdioConn) ready()             {}

// close closes the child's stdin and waits for it to exit, escalating to SIGTERM and SIGKILL.
func (c *stdioConn) close() error {
	c.closeOnce.Do(func() {
		_ = c.stdin.Close()
		if c.cmd == nil {
			return
		}
		exited := make(chan error, 1)
		go func() { exited <- c.cmd.Wait() }()
		wait := func() (error, bool) {
			select {
			case err := <-exited:
				return err, true
			case <-time.After(c.td):
				return nil, false
			}
		}
		if err, ok := wait(); ok {
			c.closeErr = exitErr(err)
			return
		}
		if c.cmd.Process.Signal(syscall.SIGTERM) == nil {
			if err, ok := wait(); ok {
				c.closeErr = exitErr(err)
				return
			}
		}
		_ = c.cmd.Process.Kill()
		if err, ok := wait(); ok {
			c.closeErr = exitErr(err)
			return
		}
		c.closeErr = errors.New("the MCP server's process did not exit")
	})
	return c.closeErr
}

// exitErr drops the exit status a stopped server reports: stopping it was the point.
func exitErr(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil
	}
	return err
}
