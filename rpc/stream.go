package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/rpc/protocol"
)

// MaxContentLength caps one incoming frame. Editors send prompts with embedded files and images,
// so it is generous, but a stray header cannot make the daemon reserve gigabytes: the body is
// read in chunks and the buffer grows only as bytes actually arrive.
const MaxContentLength = 64 << 20

// ErrMalformedFrame wraps every framing failure: a bad header block, a body that is not JSON,
// a frame cut short by the end of input. The connection cannot resynchronise after one, so the
// daemon logs it and exits.
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

func truncate(b []byte) string { return clip.String(string(b), 40, "…") }

// Stream is agentd's jsonrpc2.Stream over a byte reader and writer with LSP framing. It exists
// instead of jsonrpc2.NewHeaderStream for three reasons: a frame that is valid JSON but not a
// valid JSON-RPC request gets an error answer naming the problem instead of killing the
// connection, a huge declared Content-Length is not allocated up front, and session updates have
// a zero-allocation write path (WriteSessionUpdate).
type Stream struct {
	r      *bufio.Reader
	rc     io.Closer
	w      io.Writer
	wc     io.Closer
	log    *zap.Logger
	rbuf   []byte
	max    int
	onRead func(err error) // called once with the error that ends reading

	wmu    sync.Mutex
	wbuf   []byte
	closed atomic.Bool
	once   sync.Once

	amu   sync.Mutex
	after map[jsonrpc2.ID][]func() // work waiting for the response with that id (AfterResponse)
}

// NewStream frames messages over r and w. Closing the stream closes both.
func NewStream(r io.ReadCloser, w io.WriteCloser, log *zap.Logger) *Stream {
	if log == nil {
		log = zap.NewNop()
	}
	return &Stream{r: newBufReader(r), rc: r, w: w, wc: w, log: log, max: MaxContentLength}
}

func newBufReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 8<<10) }

// headerRoom is reserved in front of every outgoing body so the header can be written in place
// and the whole frame leaves in one Write.
const headerRoom = 32

// Read implements jsonrpc2.Stream.
func (s *Stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		body, err := ReadFrame(s.r, s.rbuf, s.max)
		if err != nil {
			if s.onRead != nil {
				s.onRead(err)
			}
			return nil, 0, err
		}
		s.rbuf = body
		msg, reply, err := decodeFrame(body)
		if err == nil {
			return msg, int64(len(body)), nil
		}
		if errors.Is(err, ErrMalformedFrame) {
			if s.onRead != nil {
				s.onRead(err)
			}
			return nil, 0, err
		}
		// A JSON value that is not a usable message: answer it when it can be answered, and
		// read on.
		s.log.Warn("invalid JSON-RPC message", zap.Error(err))
		if reply != nil {
			if _, werr := s.Write(ctx, reply); werr != nil {
				return nil, 0, werr
			}
		}
	}
}

// decodeFrame decodes a frame body. A body that is not JSON is a malformed frame; JSON that is
// not a valid message yields an error response to send back (nil for a broken response, which
// has nobody to answer).
func decodeFrame(body []byte) (msg, reply jsonrpc2.Message, err error) {
	msg, err = jsonrpc2.DecodeMessage(body)
	if err == nil {
		return msg, nil, nil
	}
	if !json.Valid(body) {
		return nil, nil, frameErr("body is not valid JSON")
	}
	var env struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	id := jsonrpc2.ID{}
	var reason string
	trimmed := bytes.TrimSpace(body)
	switch {
	case trimmed[0] == '[':
		reason = "batch requests are not supported"
	case trimmed[0] != '{':
		reason = "message must be a JSON object"
	default:
		_ = json.Unmarshal(body, &env)
		id = parseID(env.ID)
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
	rerr := jsonrpc2.NewError(jsonrpc2.InvalidRequest, "invalid request: "+reason)
	return nil, jsonrpc2.NewResponse(id, nil, rerr), errors.New(reason)
}

func parseID(raw json.RawMessage) jsonrpc2.ID {
	if len(raw) == 0 {
		return jsonrpc2.ID{}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return jsonrpc2.NewStringID(s)
	}
	var n int64
	if json.Unmarshal(raw, &n) == nil {
		return jsonrpc2.NewNumberID(n)
	}
	return jsonrpc2.ID{}
}

// Write implements jsonrpc2.Stream: one frame, one Write. Work waiting for the response it
// writes (AfterResponse) runs after it, outside the write lock.
func (s *Stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	n, after, err := s.write(msg)
	if err == nil {
		for _, fn := range after {
			fn()
		}
	}
	return n, err
}

func (s *Stream) write(msg jsonrpc2.Message) (int64, []func(), error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	buf := append(s.wbuf[:0], make([]byte, headerRoom)...)
	buf = jsonrpc2.AppendMessage(buf, msg)
	s.wbuf = buf
	after := s.takeAfter(buf[headerRoom:])
	n, err := s.flushLocked(buf)
	return n, after, err
}

// AfterResponse runs fn once the response to the client's request id has been written, so what
// fn sends follows the answer on the wire (agent/session/new's available_commands_update).
func (s *Stream) AfterResponse(id jsonrpc2.ID, fn func()) {
	s.amu.Lock()
	defer s.amu.Unlock()
	if s.after == nil {
		s.after = map[jsonrpc2.ID][]func(){}
	}
	s.after[id] = append(s.after[id], fn)
}

// takeAfter returns, and forgets, the work waiting for body when body is a response.
func (s *Stream) takeAfter(body []byte) []func() {
	s.amu.Lock()
	defer s.amu.Unlock()
	if len(s.after) == 0 {
		return nil
	}
	v, err := jsonrpc2.ScanMessageView(body)
	if err != nil || (v.Kind != jsonrpc2.MessageViewResponseResult && v.Kind != jsonrpc2.MessageViewResponseError) {
		return nil
	}
	var id jsonrpc2.ID
	if n, ok := v.ID.Number(); ok {
		id = jsonrpc2.NewNumberID(n)
	} else if str, ok := v.ID.StringValue(); ok {
		id = jsonrpc2.NewStringID(str)
	} else {
		return nil
	}
	fns := s.after[id]
	delete(s.after, id)
	return fns
}

// WriteSessionUpdate writes one agent/session/update notification without going through
// reflection or the jsonrpc2 codec: the envelope and the params are appended straight into the
// stream's reused buffer.
func (s *Stream) WriteSessionUpdate(n *protocol.SessionNotification) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	buf := s.wbuf[:0]
	if cap(buf) < 512 {
		buf = make([]byte, 0, 4096)
	}
	buf = buf[:headerRoom]
	buf = append(buf, `{"jsonrpc":"2.0","method":"`+protocol.MethodSessionUpdate+`","params":`...)
	buf = protocol.AppendSessionNotification(buf, n)
	buf = append(buf, '}')
	s.wbuf = buf
	_, err := s.flushLocked(buf)
	return err
}

// flushLocked writes the header into the reserved room in front of buf[headerRoom:] and sends
// the frame.
func (s *Stream) flushLocked(buf []byte) (int64, error) {
	if s.closed.Load() {
		return 0, jsonrpc2.ErrClientClosing
	}
	n := len(buf) - headerRoom
	var hdr [headerRoom]byte
	h := append(hdr[:0], "Content-Length: "...)
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, "\r\n\r\n"...)
	start := headerRoom - len(h)
	copy(buf[start:], h)
	w, err := s.w.Write(buf[start:])
	if cap(buf) > 1<<20 {
		s.wbuf = nil // do not pin a huge buffer after one large message
	}
	return int64(w), err
}

// Close closes both directions. It is safe to call more than once.
func (s *Stream) Close() error {
	var err error
	s.once.Do(func() {
		s.closed.Store(true)
		err = s.rc.Close()
		if werr := s.wc.Close(); err == nil {
			err = werr
		}
	})
	return err
}
