package jsonrpc

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/protocol"
)

// maxQueued is how many bytes may wait for the writer before a sender waits for room: enough
// that a client reading normally never makes the engine wait, bounded so one that stops reading
// cannot grow the queue without end.
const maxQueued = 16 << 20

// A text or thought chunk that arrives while the chunk before it still waits for the writer is
// appended to it instead of becoming a frame of its own, up to these bounds per notification:
// a client still sees text at least every coalesceSpan, and no notification grows past
// coalesceBytes of text. The first chunk is never held: an idle writer takes it at once.
//
// While a message streams fast, its chunks are also paced: a chunk of the message whose last
// chunk went to the writer less than chunkPace ago waits, with those behind it, until chunkPace
// has passed. Every frame costs the writer's wake-up and a write (about 30 µs on a small VM), and
// without pacing a fast model made a frame every dozen tokens. The first chunk of a message, and
// any chunk after a pause of chunkPace, still goes at once.
const (
	coalesceBytes = 4 << 10
	coalesceSpan  = 16 * time.Millisecond
	chunkPace     = time.Millisecond
)

// closeDrain bounds how long Close waits for queued frames to reach a client that stopped
// reading; it is well inside the contract's second for exiting.
const closeDrain = 250 * time.Millisecond

// Stream is the framing under a Conn: LSP header blocks (or ACP's lines) over a byte reader and
// writer. It is written for three reasons: a frame that is valid JSON but not a
// valid JSON-RPC request gets an error answer naming the problem instead of killing the
// connection, a huge declared Content-Length is not allocated up front, and every outgoing frame
// goes through the ordered writer (see the package doc), with a reflection-free path for session
// updates (WriteSessionUpdate).
type Stream struct {
	r      *bufio.Reader
	rc     io.Closer
	log    *zap.Logger
	rbuf   []byte
	max    int
	onRead func(err error) // called once with the error that ends reading
	trace  func(incoming bool, body []byte)
	// ndjson and translate: see Options.NDJSON and Options.Translate.
	ndjson    bool
	translate func(incoming bool, body []byte) []byte

	w         io.Writer
	wc        io.Closer
	closeOnce sync.Once
	done      chan struct{} // closed when the writer goroutine has ended

	mu      sync.Mutex
	cond    *sync.Cond // signalled when frames are queued, written, or the stream closes
	queue   []byte     // whole frames, header and body, in the order they were handed over
	scratch []byte     // the body being encoded
	writing bool       // the writer goroutine holds a batch
	closed  bool
	err     error           // the first write error; every later write returns it
	after   map[ID][]func() // work waiting for the answer with that id (AfterAnswer)
	// Supersedable answers (Supersede): the peer's requests whose answers are not queued yet,
	// and per key the newest of them.
	guards map[ID]guard
	newest map[string]ID

	// The last frame queued, while it is a text or thought chunk, is kept unencoded so the
	// chunks behind it can join it (see coalesceBytes).
	tail        bool
	tailN       protocol.SessionNotification
	tailContent protocol.ContentBlock
	tailText    []byte
	tailStart   time.Time

	// Pacing (chunkPace): the session, kind and message of the chunk last handed to the writer,
	// and when; a timer wakes the writer when a held chunk is due.
	pace                          time.Duration
	now                           func() time.Time
	sentSession, sentKind, sentID string
	sentAt                        time.Time
	timer                         *time.Timer
	timerOn                       bool
}

// NewStream frames messages over r and w and starts the writer. Closing the stream closes both.
func NewStream(r io.ReadCloser, w io.WriteCloser, log *zap.Logger) *Stream {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Stream{r: bufio.NewReaderSize(r, 8<<10), rc: r, w: w, wc: w, log: log, max: MaxContentLength,
		done: make(chan struct{}), pace: chunkPace, now: time.Now}
	s.cond = sync.NewCond(&s.mu)
	go s.writeLoop()
	return s
}

// read returns the next message. A body that is valid JSON but not a usable message is answered
// (when it can be) and skipped; a framing failure or the end of input ends reading, and is
// passed to onRead.
func (s *Stream) read() (*message, error) {
	for {
		var body []byte
		var err error
		if s.ndjson {
			body, err = ReadLine(s.r, s.rbuf, s.max)
		} else {
			body, err = ReadFrame(s.r, s.rbuf, s.max)
		}
		if err != nil {
			if s.onRead != nil {
				s.onRead(err)
			}
			return nil, err
		}
		s.rbuf = body
		if s.trace != nil {
			s.trace(true, body)
		}
		if s.translate != nil {
			if body = s.translate(true, body); body == nil {
				continue
			}
		}
		msg, reply, err := decodeFrame(body)
		if err == nil {
			return msg, nil
		}
		// A JSON value that is not a usable message: answer it when it can be answered, and
		// read on.
		s.log.Warn("invalid JSON-RPC message", zap.Error(err))
		if reply != nil {
			if werr := s.writeResponse(reply.id, nil, reply.err); werr != nil {
				return nil, werr
			}
		}
	}
}

// writeCall queues a request behind every frame handed over before it.
func (s *Stream) writeCall(id ID, method string, params []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(func(b []byte) []byte { return appendCall(b, id, method, params) })
}

// writeNotification queues a notification behind every frame handed over before it.
func (s *Stream) writeNotification(method string, params []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(func(b []byte) []byte { return appendNotification(b, method, params) })
}

// writeResponse queues the answer to the peer's request id behind every frame handed over
// before it. Work waiting for that answer (AfterAnswer) runs once it is queued, outside the
// lock, so what that work sends follows the answer on the wire.
func (s *Stream) writeResponse(id ID, result []byte, rerr *WireError) error {
	s.mu.Lock()
	if len(s.guards) > 0 && id.IsValid() {
		result = s.unguardLocked(id, result, rerr)
	}
	err := s.enqueueLocked(func(b []byte) []byte { return appendResponse(b, id, result, rerr) })
	var after []func()
	if err == nil && len(s.after) > 0 && id.IsValid() {
		after = s.after[id]
		delete(s.after, id)
	}
	s.mu.Unlock()
	for _, fn := range after {
		fn()
	}
	return err
}

// WriteSessionUpdate queues one agent/session/update notification without reflection or the
// generic encoder: the envelope and the params are appended straight into the queue. A text or
// thought chunk that follows another of the same session, kind and message still waiting for
// the writer joins it (see coalesceBytes).
func (s *Stream) WriteSessionUpdate(n *protocol.SessionNotification) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !coalescible(n) {
		return s.enqueueLocked(func(b []byte) []byte { return appendUpdate(b, n) })
	}
	text := n.Update.Content.Text
	if s.tail && s.tailN.SessionID == n.SessionID && s.tailN.Update.SessionUpdate == n.Update.SessionUpdate &&
		s.tailN.Update.MessageID == n.Update.MessageID && len(s.tailText)+len(text) <= coalesceBytes &&
		s.now().Sub(s.tailStart) <= coalesceSpan && s.err == nil && !s.closed {
		s.tailText = append(s.tailText, text...)
		return nil
	}
	if err := s.readyLocked(); err != nil {
		return err
	}
	s.tail = true
	s.tailN = *n
	s.tailContent = *n.Update.Content
	s.tailN.Update.Content = &s.tailContent
	s.tailText = append(s.tailText[:0], text...)
	s.tailStart = s.now()
	if !s.writing {
		if d := s.holdLocked(s.tailStart); d > 0 {
			s.armLocked(d)
		} else {
			s.cond.Broadcast()
		}
	}
	return nil
}

// ErrStoredUpdate refuses a stored session update that is not one valid JSON object in UTF-8.
var ErrStoredUpdate = errors.New("jsonrpc: a stored session update that is not one valid JSON object")

// WriteStoredUpdate queues an agent/session/update whose update is JSON already (one a
// transcript stored, replayed by session/load) with the update's bytes as they are: no decoding
// and no encoding again. The bytes come from a file an attacker may have planted, so they are
// refused (ErrStoredUpdate) unless they are one valid JSON object, in valid UTF-8 (the strict walk, as
// every incoming frame is read): then they are one value in the frame and cannot add a member
// (a method, an id, another session) to the message around them. It never joins a held chunk.
func (s *Stream) WriteStoredUpdate(n *protocol.StoredSessionNotification) error {
	u := n.Update
	if len(u) < 2 || u[0] != '{' || jscan.ValidValueEnd(u, 0) != len(u) || !utf8.Valid(u) {
		return ErrStoredUpdate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(func(b []byte) []byte {
		b = append(b, `{"jsonrpc":"2.0","method":"`+protocol.MethodSessionUpdate+`","params":`...)
		b = protocol.AppendStoredSessionNotification(b, n)
		return append(b, '}')
	})
}

// holdLocked says how long the held chunk must still wait for its pace (chunkPace): zero when
// it is the first of its message, or its message's last chunk went to the writer long enough ago.
func (s *Stream) holdLocked(now time.Time) time.Duration {
	if s.sentKind == "" || s.tailN.Update.SessionUpdate != s.sentKind || s.tailN.Update.MessageID != s.sentID ||
		s.tailN.SessionID != s.sentSession {
		return 0
	}
	return s.sentAt.Add(s.pace).Sub(now)
}

// armLocked makes sure the writer is woken within d.
func (s *Stream) armLocked(d time.Duration) {
	if s.timerOn {
		return
	}
	s.timerOn = true
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.tick)
	} else {
		s.timer.Reset(d)
	}
}

// tick wakes the writer for a chunk whose pace has passed.
func (s *Stream) tick() {
	s.mu.Lock()
	s.timerOn = false
	s.cond.Broadcast()
	s.mu.Unlock()
}

// coalescible reports whether n is a plain text or thought chunk, which may join its neighbours.
func coalescible(n *protocol.SessionNotification) bool {
	u := &n.Update
	if u.SessionUpdate != protocol.UpdateAgentMessageChunk && u.SessionUpdate != protocol.UpdateAgentThoughtChunk {
		return false
	}
	c := u.Content
	return c != nil && c.Type == "text" && c.MimeType == "" && c.Data == "" && c.URI == "" && c.Name == "" &&
		c.Resource == nil && len(c.Meta) == 0 && len(u.Meta) == 0
}

func appendUpdate(b []byte, n *protocol.SessionNotification) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"`+protocol.MethodSessionUpdate+`","params":`...)
	b = protocol.AppendSessionNotification(b, n)
	return append(b, '}')
}

// flushTailLocked encodes the held chunk into the queue, so whatever comes next follows it.
func (s *Stream) flushTailLocked() {
	if !s.tail {
		return
	}
	s.tail = false
	if s.timerOn {
		// Nothing is held any more: a timer left running would wake the writer for nothing.
		s.timer.Stop()
		s.timerOn = false
	}
	s.sentSession, s.sentKind, s.sentID = s.tailN.SessionID, s.tailN.Update.SessionUpdate, s.tailN.Update.MessageID
	s.sentAt = s.now()
	s.tailContent.Text = string(s.tailText)
	s.frameLocked(func(b []byte) []byte { return appendUpdate(b, &s.tailN) })
	s.tailContent.Text = ""
	if cap(s.tailText) > 2*coalesceBytes {
		s.tailText = nil
	}
}

// AfterAnswer runs fn once the answer to the client's request id is queued, so what fn sends
// follows that answer on the wire (agent/session/new's available_commands_update, the next
// queued prompt of a session).
func (s *Stream) AfterAnswer(id ID, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.after == nil {
		s.after = map[ID][]func(){}
	}
	s.after[id] = append(s.after[id], fn)
}

// guard is one supersedable answer: its key, what it answers once superseded, and whether it is.
type guard struct {
	key        string
	instead    []byte
	superseded bool
}

// Supersede makes id the newest request of key. The answer to the request of the same key
// before it, if it is not queued yet, goes out as instead: the check and the answer's place on
// the queue are one step under the writer's lock, so an answer queued after this call returns
// is never the superseded request's own. id's answer becomes supersedable in turn, by the next
// request of key, until it is queued.
func (s *Stream) Supersede(key string, id ID, instead []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.guards == nil {
		s.guards, s.newest = map[ID]guard{}, map[string]ID{}
	}
	if old, ok := s.newest[key]; ok {
		if g, ok := s.guards[old]; ok {
			g.superseded = true
			s.guards[old] = g
		}
	}
	s.guards[id] = guard{key: key, instead: instead}
	s.newest[key] = id
}

// unguardLocked forgets id's guard now that its answer is being queued, and returns the result
// to queue: instead when the request was superseded (an error answer stays as it is).
func (s *Stream) unguardLocked(id ID, result []byte, rerr *WireError) []byte {
	g, ok := s.guards[id]
	if !ok {
		return result
	}
	delete(s.guards, id)
	if s.newest[g.key] == id {
		delete(s.newest, g.key)
	}
	if g.superseded && rerr == nil {
		return g.instead
	}
	return result
}

// enqueueLocked encodes one body with appendBody and queues it as a frame. It waits while the
// queue is full, and fails once the stream is closed or a write has failed.
func (s *Stream) enqueueLocked(appendBody func([]byte) []byte) error {
	if err := s.readyLocked(); err != nil {
		return err
	}
	s.frameLocked(appendBody)
	return nil
}

// readyLocked queues the held chunk, waits while the queue is full, and says whether frames may
// still be queued.
func (s *Stream) readyLocked() error {
	s.flushTailLocked()
	for len(s.queue) >= maxQueued && !s.closed && s.err == nil {
		s.cond.Wait()
		s.flushTailLocked()
	}
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return ErrClosing
	}
	return nil
}

// frameLocked encodes one body and appends it, framed, to the queue.
func (s *Stream) frameLocked(appendBody func([]byte) []byte) {
	s.scratch = appendBody(s.scratch[:0])
	body := s.scratch
	if s.translate != nil {
		if body = s.translate(false, body); body == nil {
			return
		}
	}
	if s.ndjson {
		// encoding/json escapes every control character inside strings, so a body never holds
		// a raw newline and one line is one message.
		s.queue = append(s.queue, body...)
		s.queue = append(s.queue, '\n')
	} else {
		s.queue = append(s.queue, "Content-Length: "...)
		s.queue = strconv.AppendInt(s.queue, int64(len(body)), 10)
		s.queue = append(s.queue, "\r\n\r\n"...)
		s.queue = append(s.queue, body...)
	}
	if s.trace != nil {
		s.trace(false, body)
	}
	if cap(s.scratch) > 1<<20 {
		defer func() { s.scratch = nil }() // do not pin a huge buffer after one large message
	}
	if !s.writing {
		s.cond.Broadcast()
	}
}

// writeLoop is the writer: it takes everything queued so far and writes it with one Write, so
// frames queued while a write is in progress leave together.
func (s *Stream) writeLoop() {
	defer close(s.done)
	var batch []byte
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.closed {
			if s.tail {
				d := s.holdLocked(s.now())
				if d <= 0 {
					break
				}
				s.armLocked(d)
			}
			s.cond.Wait()
		}
		s.flushTailLocked()
		if len(s.queue) == 0 || s.err != nil {
			s.queue = nil
			s.mu.Unlock()
			return
		}
		batch, s.queue = s.queue, batch[:0]
		s.writing = true
		s.mu.Unlock()

		_, err := s.w.Write(batch)

		s.mu.Lock()
		s.writing = false
		if err != nil && s.err == nil {
			s.err = err
			s.log.Debug("writing to the client failed", zap.Error(err))
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		if cap(batch) > maxQueued {
			batch = nil
		}
	}
}

// Close stops taking frames, gives the writer a moment (closeDrain) to write what is queued,
// then closes both directions. It is safe to call more than once.
func (s *Stream) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		if s.timer != nil {
			s.timer.Stop()
		}
		s.cond.Broadcast()
		s.mu.Unlock()
		t := time.NewTimer(closeDrain)
		select {
		case <-s.done:
		case <-t.C:
		}
		t.Stop()
		err = s.rc.Close()
		if !same(s.wc, s.rc) {
			if werr := s.wc.Close(); err == nil {
				err = werr
			}
		}
		<-s.done
	})
	return err
}

// same reports whether a and b are one value (a connection passed as both reader and writer),
// which must be closed once. Values of a type that cannot be compared are different.
func same(a, b io.Closer) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}
