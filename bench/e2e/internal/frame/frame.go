// Package frame reads and writes one message in either of agentd's framings (LSP's
// Content-Length header, or ACP's newline-delimited JSON) for the bench driver and its baseline
// programs. It uses the standard library only, so the baselines stay the minimal programs they
// measure.
package frame

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Read returns the body of the next message.
func Read(r *bufio.Reader, ndjson bool) ([]byte, error) {
	if ndjson {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("bad header %q", line)
			}
		}
	}
	if n < 0 {
		return nil, errors.New("frame without Content-Length")
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

// Append appends body framed as one message to dst.
func Append(dst, body []byte, ndjson bool) []byte {
	if ndjson {
		return append(append(dst, body...), '\n')
	}
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}
