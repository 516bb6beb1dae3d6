package httpsse

import (
	"bytes"
	"errors"
	"io"
	"iter"
	"time"
)

// Event is one server-sent event: its `event:` field and its data lines joined by "\n". Data is
// a view into the reader's memory, valid until the next event is read: a dialect copies what it
// keeps past the event (strings made from it are copies already).
type Event struct {
	Type string
	Data []byte
}

// ErrEventTooLong is the read error of an event over the size limit.
var ErrEventTooLong = errors.New("httpsse: an event exceeded the size limit")

// eventReader parses a text/event-stream body (the WHATWG event-stream format) into events. It
// replaces github.com/tmaxmax/go-sse's reader on the streaming path because that one costs two
// allocations per event (bufio.Scanner.Text and a strings.Builder) and a second buffer copy, at
// one event per streamed token; this one reuses its buffers, so an event costs no allocation.
// It follows go-sse in the cases the standard leaves to the reader (its tests compare the two on
// every fixture and fuzzed input), so the dialects see the same events:
//   - lines end with "\n", "\r\n" or "\r"; a UTF-8 BOM is dropped from the first non-blank line;
//   - a blank line dispatches the event when an `event`, `id` or `data` field was seen since the
//     last one, even with no data (Data is then empty);
//   - `retry`, comments and unknown fields are ignored, and an `id` holding NUL is ignored;
//   - the end of the body never dispatches a pending event, and a partial last line is dropped.
type eventReader struct {
	r          io.Reader
	buf        []byte
	start, end int // buf[start:end] is read and not yet consumed
	max        int
	size       int // bytes of the event being read so far, line ends included

	data    []byte
	typ     string
	lastTyp string // the previous event type, reused so a repeated type costs no allocation
	dirty   bool
	cr      bool // the last line ended with '\r': a '\n' right after it is part of that line end
	started bool // a non-blank line was read (only the first may start with a BOM)
	err     error

	// Pacing of a fast stream (DefaultReadPace); pace 0 reads at once.
	pace   time.Duration
	lastAt time.Time // when the last read that got bytes returned
	run    int       // reads in a row that got bytes within 2×pace of being issued
	lastN  int       // what the last read that got bytes got
	taken  int       // bytes read since the last wait
	sleep  func(time.Duration)
	now    func() time.Time
}

// readChunk is the least room a read is given, so reads from a bufio.Reader of that size go
// straight into the event reader's buffer.
const readChunk = 4096

func newEventReader(r io.Reader, maxEvent int) *eventReader {
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEventSize
	}
	return &eventReader{r: r, buf: make([]byte, 4*readChunk), max: maxEvent}
}

// next returns the next event, or false at the end of the body or at a read error (in p.err;
// io.EOF at the end).
func (p *eventReader) next() (Event, bool) {
	for {
		line, ok := p.line()
		if !ok {
			return Event{}, false
		}
		if len(line) == 0 {
			p.size = 0
			if !p.dirty {
				continue
			}
			d := p.data
			if len(d) > 0 {
				d = d[:len(d)-1]
			}
			ev := Event{Type: p.typ, Data: d}
			p.data, p.typ, p.dirty = p.data[:0], "", false
			return ev, true
		}
		p.field(line)
	}
}

// bom is the UTF-8 byte order mark: an array, which the compiler lays out (a []byte conversion
// at package level is made by the init).
var bom = [...]byte{0xEF, 0xBB, 0xBF}

// field applies one non-blank line to the event being read.
func (p *eventReader) field(line []byte) {
	if !p.started {
		p.started = true
		if line = bytes.TrimPrefix(line, bom[:]); len(line) == 0 {
			return // a blank line; nothing is pending before the first field
		}
	}
	colon := bytes.IndexByte(line, ':')
	if colon > len("event") {
		return // no field name is that long
	}
	name, value := line, []byte(nil)
	if colon >= 0 {
		name, value = line[:colon], line[colon+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		p.data = append(p.data, value...)
		p.data = append(p.data, '\n')
		p.dirty = true
	case "event":
		if string(value) != p.lastTyp {
			p.lastTyp = string(value)
		}
		p.typ = p.lastTyp
		p.dirty = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			p.dirty = true
		}
	}
}

// line returns the next line without its end, reading as needed; false at the end of the body
// (a partial last line is dropped) or at a read error.
func (p *eventReader) line() ([]byte, bool) {
	scan := p.start
	for {
		if p.cr && p.start < p.end {
			p.cr = false
			if p.buf[p.start] == '\n' {
				p.start++
				p.size++
			}
			scan = p.start
		}
		if !p.cr && scan < p.end {
			if i := newline(p.buf[scan:p.end]); i >= 0 {
				i += scan
				line := p.buf[p.start:i]
				p.cr = p.buf[i] == '\r'
				p.start = i + 1
				if p.size += len(line) + 1; p.size > p.max {
					p.err = ErrEventTooLong
					return nil, false
				}
				return line, true
			}
			scan = p.end
		}
		if p.err != nil {
			return nil, false
		}
		if p.size+p.end-p.start > p.max {
			p.err = ErrEventTooLong
			return nil, false
		}
		if len(p.buf)-p.end < readChunk {
			// Move the partial line to the front, and grow when it fills half the buffer.
			n := copy(p.buf, p.buf[p.start:p.end])
			if n > len(p.buf)/2 {
				nb := make([]byte, 2*len(p.buf))
				copy(nb, p.buf[:n])
				p.buf = nb
			}
			scan -= p.start
			p.start, p.end = 0, n
		}
		var issued time.Time
		if p.pace > 0 {
			if p.run >= paceAfter && (p.lastN < paceBelow || p.taken >= paceBytes) {
				if d := p.lastAt.Add(p.pace).Sub(p.now()); d > 0 {
					p.sleep(d)
				}
				p.taken = 0
			}
			issued = p.now()
		}
		n, err := p.r.Read(p.buf[p.end:])
		p.end += n
		p.err = err
		if n > 0 && p.pace > 0 {
			now := p.now()
			if now.Sub(issued) < 2*p.pace {
				p.run++
			} else {
				p.run = 0
			}
			p.lastAt, p.lastN = now, n
			p.taken += n
		}
	}
}

// newline is the index of the first '\n' or '\r' in b, or -1.
func newline(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	head := b
	if i >= 0 {
		head = b[:i]
	}
	if j := bytes.IndexByte(head, '\r'); j >= 0 {
		return j
	}
	return i
}

// ReadEvents parses r as an event stream, with events up to maxEvent bytes (0 means
// DefaultMaxEventSize), the way a Stream's Events does. It yields each event with a nil error,
// and the read error that ended it, if any (io.EOF is not one). Each event's Data is valid until
// the next one is read.
func ReadEvents(r io.Reader, maxEvent int) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		p := newEventReader(r, maxEvent)
		for {
			ev, ok := p.next()
			if !ok {
				break
			}
			if !yield(ev, nil) {
				return
			}
		}
		if p.err != nil && p.err != io.EOF {
			yield(Event{}, p.err)
		}
	}
}

// DefaultReadPace spaces the reads of a fast stream. A model streaming back to back (a local
// one) sends each token in a segment of its own; read as they come, each costs the daemon a
// wake-up (about 30 µs on a small VM) for one or two tokens, and even a reader that waits is
// woken by the runtime's poller for every segment that arrives meanwhile. Once paceAfter reads
// in a row found bytes within 2×pace, the reader reads what is there, until a read gets less
// than paceBelow (it has caught up) or paceBytes were read, and then waits until pace after its
// last read. So a fast stream is read about once a pace, at up to paceBytes a pace (32 MB/s at
// 1 ms, some 150,000 OpenAI chunks a second; a server sending faster waits on TCP's window). A
// short reply never gets that far, nor a stream slower than one read a pace, and the first token
// of a stream, or the first after a pause, is never held. Measured over loopback with 50,000
// back-to-back deltas (docs/benchmarks.md, "Per-delta CPU, fourth pass"): 1 ms cost less CPU
// than 500 µs (each wait also wakes the runtime's sysmon thread); a budget of 16 or 32 KB less
// than 8 KB (which slowed the stream) or none.
const DefaultReadPace = time.Millisecond

const (
	paceAfter = 16
	paceBelow = 2 << 10
	paceBytes = 32 << 10
)
