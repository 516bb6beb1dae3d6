package httpsse

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// timedBody is a body whose events arrive at given times on a fake clock. A Read returns every
// byte that has arrived; when none has, it blocks, which here means the clock jumps to the next
// arrival. Each Read also costs readCost of the clock.
type timedBody struct {
	now      time.Duration
	events   []string
	arrivals []time.Duration
	next     int // the first event not yet returned
	partial  string
	reads    int
	readAt   []int // the event index each read started at, for the tests' checks
}

const (
	readCost = time.Microsecond
	httpRead = 4 << 10
)

func (b *timedBody) Read(p []byte) (int, error) {
	b.reads++
	b.readAt = append(b.readAt, b.next)
	b.now += readCost
	if b.partial == "" && b.next == len(b.events) {
		return 0, fmt.Errorf("EOF")
	}
	if b.partial == "" && b.arrivals[b.next] > b.now {
		b.now = b.arrivals[b.next]
	}
	var out strings.Builder
	out.WriteString(b.partial)
	for b.next < len(b.events) && b.arrivals[b.next] <= b.now {
		out.WriteString(b.events[b.next])
		b.next++
	}
	if len(p) > httpRead {
		p = p[:httpRead] // a read through net/http gets at most its buffer
	}
	n := copy(p, out.String())
	b.partial = out.String()[n:]
	return n, nil
}

// read runs the event reader with pacing over b and returns the events' data and the waits it
// asked for.
func (b *timedBody) read(t *testing.T, pace time.Duration) (got []string, sleeps []time.Duration) {
	t.Helper()
	p := newEventReader(b, 0)
	p.pace = pace
	p.now = func() time.Time { return time.Unix(0, 0).Add(b.now) }
	p.sleep = func(d time.Duration) { sleeps = append(sleeps, d); b.now += d }
	for {
		ev, ok := p.next()
		if !ok {
			break
		}
		got = append(got, string(ev.Data))
	}
	return got, sleeps
}

func stream(n int, at func(i int) time.Duration) *timedBody {
	b := &timedBody{}
	for i := range n {
		b.events = append(b.events, fmt.Sprintf("data: %d\n\n", i))
		b.arrivals = append(b.arrivals, at(i))
	}
	return b
}

// A stream of back-to-back events (one every 10 µs) is read in a few hundred reads instead of
// one per event, every event in order; the first paceAfter reads are never held.
func TestFastStreamReadsArePaced(t *testing.T) {
	const n = 10000
	every := func(i int) time.Duration { return time.Duration(i) * 10 * time.Microsecond }

	unpaced := stream(n, every)
	if _, sleeps := unpaced.read(t, 0); len(sleeps) != 0 || unpaced.reads < n {
		t.Fatalf("without pacing: %d reads, %d waits; want one read per event and no wait", unpaced.reads, len(sleeps))
	}

	b := stream(n, every)
	got, sleeps := b.read(t, DefaultReadPace)
	if len(got) != n {
		t.Fatalf("%d events, want %d", len(got), n)
	}
	for i, d := range got {
		if d != fmt.Sprint(i) {
			t.Fatalf("event %d = %q", i, d)
		}
	}
	// 100 ms of events at one read per DefaultReadPace (1 ms): about 100 reads, and the buffer's
	// refills when more than a read's room arrived.
	if max := n / 20; b.reads > max {
		t.Errorf("%d reads for %d back-to-back events, want ≤ %d", b.reads, n, max)
	}
	for _, d := range sleeps {
		if d <= 0 || d > DefaultReadPace {
			t.Errorf("a wait of %v, want within (0, %v]", d, DefaultReadPace)
		}
	}
	if len(sleeps) == 0 || b.readAt[paceAfter] != paceAfter {
		t.Errorf("the first %d reads took one event each: reads started at %v", paceAfter, b.readAt[:paceAfter+1])
	}
	t.Logf("%d events: %d reads, %d waits (without pacing: %d reads)", n, b.reads, len(sleeps), unpaced.reads)
}

// late returns, per event, how long after its arrival the reader returned it.
func (b *timedBody) late(t *testing.T, pace time.Duration) []time.Duration {
	t.Helper()
	return b.lateWith(t, pace, func(data string) string { return data })
}

// lateWith is late for events whose number is key(data).
func (b *timedBody) lateWith(t *testing.T, pace time.Duration, key func(string) string) []time.Duration {
	t.Helper()
	p := newEventReader(b, 0)
	p.pace = pace
	p.now = func() time.Time { return time.Unix(0, 0).Add(b.now) }
	p.sleep = func(d time.Duration) { b.now += d }
	var late []time.Duration
	for ev, ok := p.next(); ok; ev, ok = p.next() {
		late = append(late, b.now-b.arrivals[len(late)])
		if key(string(ev.Data)) != fmt.Sprint(len(late)-1) {
			t.Fatalf("event %d = %q", len(late)-1, ev.Data)
		}
	}
	if len(late) != len(b.events) {
		t.Fatalf("%d events, want %d", len(late), len(b.events))
	}
	return late
}

// No event is held more than DefaultReadPace; the first of a stream, every event of a stream spaced
// wider than 2×DefaultReadPace (a model's usual pace), and the first after a pause are not held at all.
func TestPacingHoldsNoEventLongAndSomeNotAtAll(t *testing.T) {
	const fresh = 2 * readCost // read at once: the read that got it, and the one before
	slow := stream(50, func(i int) time.Duration { return time.Duration(i) * 2 * DefaultReadPace })
	for i, d := range slow.late(t, DefaultReadPace) {
		if d > fresh {
			t.Fatalf("event %d of a stream spaced %v was returned %v after it arrived", i, 2*DefaultReadPace, d)
		}
	}

	// 1,000 back-to-back events, a pause of 50 ms, then 1,000 more.
	const burst = 1000
	b := stream(2*burst, func(i int) time.Duration {
		d := time.Duration(i) * 10 * time.Microsecond
		if i >= burst {
			d += 50 * time.Millisecond
		}
		return d
	})
	late := b.late(t, DefaultReadPace)
	for i, d := range late {
		if d > DefaultReadPace+fresh {
			t.Errorf("event %d was returned %v after it arrived, want ≤ %v", i, d, DefaultReadPace+fresh)
		}
	}
	if late[0] > fresh || late[burst] > fresh {
		t.Errorf("the first event was returned %v after it arrived, the first after the pause %v; want at once", late[0], late[burst])
	}
	held := 0
	for _, d := range late {
		if d > fresh {
			held++
		}
	}
	if held < burst {
		t.Errorf("only %d of %d events were held: the bursts were not paced", held, 2*burst)
	}
}

// A reader that is behind is not held to one read a pace: it takes at least paceBytes a pace,
// so a backlog (or a server faster than that) is read at that rate, and a stream of 4 MB/s
// (2 KB events every 500 µs, far beyond any model) is read with no event held past a pace.
func TestPacingReadsUpToPaceBytesAPace(t *testing.T) {
	const n = 20000
	backlog := stream(n, func(int) time.Duration { return 0 })
	total := 0
	for _, e := range backlog.events {
		total += len(e)
	}
	got, _ := backlog.read(t, DefaultReadPace)
	if len(got) != n {
		t.Fatalf("%d events, want %d", len(got), n)
	}
	if max := time.Duration(total/paceBytes+1) * DefaultReadPace; backlog.now > max {
		t.Errorf("a backlog of %d KB took %v to read, want ≤ %v (%d KB a pace)", total>>10, backlog.now, max, paceBytes>>10)
	}

	big := stream(200, func(i int) time.Duration { return time.Duration(i) * 500 * time.Microsecond })
	for i := range big.events {
		big.events[i] = fmt.Sprintf("data: %d %s\n\n", i, strings.Repeat("x", 2<<10))
	}
	held := 0
	for i, d := range big.lateWith(t, DefaultReadPace, func(data string) string { return strings.Fields(data)[0] }) {
		if d > DefaultReadPace+2*readCost {
			t.Errorf("event %d of a 4 MB/s stream was returned %v after it arrived", i, d)
		}
		if d > 2*readCost {
			held++
		}
	}
	if held == 0 {
		t.Error("no event of a 4 MB/s stream was held: it was not paced")
	}
}
