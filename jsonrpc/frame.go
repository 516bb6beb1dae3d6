package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/agentd-dev/agentd/internal/clip"
)

// MaxContentLength caps one incoming frame. Editors send prompts with embedded files and images,
// so it is generous, but a stray header cannot make the daemon reserve gigabytes: the body is
// read in chunks and the buffer grows only as bytes actually arrive.
const MaxContentLength = 64 << 20

// ErrMalformedFrame wraps every framing failure: a bad header block or a frame cut short by the
// end of input. The connection cannot resynchronise after one, so the daemon logs it and exits.
// A well-framed body that is not JSON is not one: it is answered -32700 and reading goes on.
var ErrMalformedFrame = errors.New("malformed frame")

// FrameError is a framing failure with what was wrong.
type FrameError struct{ Reason string }

func (e *FrameError) Error() string        { return "malformed frame: " + e.Reason }
func (e *FrameError) Is(target error) bool { return target == ErrMalformedFrame }

func frameErr(format string, args ...any) error {
	return &FrameError{Reason: fmt.Sprintf(format, args...)}
}

// ReadFrame reads one LSP base-protocol frame (header block, blank line, Content-Length bytes)
// from r and returns its body, reusing buf when it is large enough. Header names are
// case-insensitive, bare "\n" line ends are accepted, unknown headers are ignored. io.EOF means
// the input ended cleanly between frames.
func ReadFrame(r *bufio.Reader, buf []byte, max int) ([]byte, error) {
	length := -1
	first := true
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if err == io.EOF && first && len(line) == 0 {
				return nil, io.EOF
			}
			if err == bufio.ErrBufferFull {
				return nil, frameErr("header line longer than %d bytes", r.Size())
			}
			if err == io.EOF {
				return nil, frameErr("input ended inside a header")
			}
			return nil, err
		}
		first = false
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return nil, frameErr("header line %q has no colon", truncate(line))
		}
		if !bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			continue
		}
		n, err := strconv.Atoi(string(bytes.TrimSpace(value)))
		if err != nil || n <= 0 {
			return nil, frameErr("Content-Length %q is not a positive number", truncate(value))
		}
		if n > max {
			return nil, frameErr("Content-Length %d exceeds the limit of %d bytes", n, max)
		}
		length = n
	}
	if length < 0 {
		return nil, frameErr("header block has no Content-Length")
	}
	// Grow in steps so a lying Content-Length costs only the bytes that really arrive.
	body := buf[:0]
	for len(body) < length {
		want := min(length-len(body), 1<<20)
		if cap(body)-len(body) < want {
			body = append(body[:len(body):len(body)], make([]byte, want)...)[:len(body)]
		}
		n, err := io.ReadFull(r, body[len(body):len(body)+want])
		body = body[:len(body)+n]
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, frameErr("input ended after %d of %d body bytes", len(body), length)
			}
			return nil, err
		}
	}
	return body, nil
}

// ReadLine reads one newline-delimited JSON message (ACP's framing) from r and returns it without
// its line end, reusing buf when it is large enough. Blank lines are skipped; a last line without
// a newline still counts. io.EOF means the input ended cleanly between messages.
func ReadLine(r *bufio.Reader, buf []byte, max int) ([]byte, error) {
	for {
		body := buf[:0]
		for {
			chunk, err := r.ReadSlice('\n')
			if len(body)+len(chunk) > max+2 {
				return nil, frameErr("line longer than the limit of %d bytes", max)
			}
			body = append(body, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				if len(bytes.TrimSpace(body)) == 0 {
					return nil, io.EOF
				}
				break
			}
			if err != nil {
				return nil, err
			}
			break
		}
		body = bytes.TrimRight(body, "\r\n")
		if len(bytes.TrimSpace(body)) > 0 {
			return body, nil
		}
		buf = body
	}
}

func truncate(b []byte) string { return clip.String(string(b), 40, "…") }

// decodeFrame decodes a frame body. A body that is not JSON yields a -32700 answer with a null
// id (the frame's length was right, so the next frame is still found); JSON that is not a valid
// message yields a -32600 answer (nil for a broken response, which has nobody to answer).
func decodeFrame(body []byte) (msg, reply *message, err error) {
	msg, err = decodeMessage(body)
	if err == nil {
		return msg, nil, nil
	}
	if !json.Valid(body) {
		perr := NewError(ParseError, "parse error: the message body is not valid JSON")
		return nil, &message{err: perr}, errors.New("body is not valid JSON")
	}
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	id := ID{}
	var reason string
	trimmed := bytes.TrimSpace(body)
	switch {
	case trimmed[0] == '[':
		reason = "batch requests are not supported"
	case trimmed[0] != '{':
		reason = "message must be a JSON object"
	default:
		_ = json.Unmarshal(body, &env)
		id = ParseID(env.ID)
		switch {
		case len(env.Method) == 0 && (len(env.Result) > 0 || len(env.Error) > 0 || id.IsValid()):
			// A broken response: answering it would look like a response to one of the
			// client's own requests with that id. Log it; the call it answers runs into its
			// deadline.
			return nil, nil, fmt.Errorf("unusable response: %v", err)
		case env.JSONRPC == nil:
			reason = `"jsonrpc" member is missing`
		case *env.JSONRPC != "2.0":
			reason = `"jsonrpc" must be "2.0"`
		case len(env.ID) > 0 && !id.IsValid() && string(env.ID) != "null":
			reason = `"id" must be a string or an integer`
		case len(env.Method) == 0:
			reason = `"method" member is missing`
		case env.Method[0] != '"':
			reason = `"method" must be a string`
		default:
			reason = err.Error()
		}
	}
	return nil, &message{id: id, err: NewError(InvalidRequest, "invalid request: "+reason)}, errors.New(reason)
}

// ParseID reads a JSON-RPC id (a string or an integer); anything else is the invalid, zero ID.
func ParseID(raw json.RawMessage) ID {
	id, _ := decodeID(bytes.TrimSpace(raw))
	return id
}
