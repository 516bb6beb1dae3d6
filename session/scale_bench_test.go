package session

// Issue 34 item 3: a long scripted session (a read and an edit on every turn, the history kept),
// its CPU per turn from the first hundred turns to the last, and session/load and resume of a
// 100 MB transcript. bench/scale.sh runs them; docs/benchmarks.md records the figures.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

func scaleTurns() int {
	if n, err := strconv.Atoi(os.Getenv("AGENTD_SCALE_TURNS")); err == nil && n >= 200 {
		return n
	}
	return 1000
}

// longSession runs turns scripted turns in one persisted session: each turn reads a.txt, edits
// one of its lines, and answers with text (three model calls), the history growing as in a real
// session. It returns the CPU of each turn and the session's state directory.
func longSession(b *testing.B, turns int) (cpu []time.Duration, wall []time.Duration, stateDir, id string) {
	b.Helper()
	dir := b.TempDir()
	var text strings.Builder
	for i := range 100 {
		fmt.Fprintf(&text, "line %03d: some line of code\n", i)
	}
	ws := &fakeWS{files: map[string]string{dir + "/a.txt": text.String()}}
	turn := 0
	prov := &loopProvider{reply: func(n int) []providers.Event {
		switch n % 3 {
		case 1:
			return callsReply(tc{fmt.Sprintf("r%d", n), "read_file", `{"path":"a.txt"}`})
		case 2:
			old := fmt.Sprintf("line %03d: some line of code", turn%100)
			if turn >= 100 {
				old = fmt.Sprintf("line %03d: edited %d", turn%100, turn-100)
			}
			return callsReply(tc{fmt.Sprintf("e%d", n), "edit_file", fmt.Sprintf(`{"path":"a.txt","old":%q,"new":"line %03d: edited %d"}`, old, turn%100, turn)})
		}
		return textReply("Edited line " + strconv.Itoa(turn%100) + " of a.txt as asked; the file still has one hundred lines.")
	}}
	stateDir = b.TempDir()
	m := NewManager(Deps{
		Client:     nopClient{},
		Workspaces: func(string, *workspace.Roots) workspace.Workspace { return ws },
		Providers:  fakeSource{p: prov},
		Tools:      tools.NewRegistry(readTool{}, editTool{}),
		Settings:   func() config.Settings { return config.Settings{Mode: config.ModeAuto} },
		StateDir:   stateDir,
	})
	defer m.Shutdown(context.Background())
	ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: dir})
	if err != nil {
		b.Fatal(err)
	}
	for turn = 0; turn < turns; turn++ {
		p := protocol.PromptParams{SessionID: ns.SessionID, Prompt: []protocol.ContentBlock{protocol.TextBlock("edit line " + strconv.Itoa(turn%100) + " of a.txt")}}
		c0, t0 := cpuTime(), time.Now()
		res, err := m.Prompt(context.Background(), p)
		if err != nil || res.StopReason != protocol.StopEndTurn {
			b.Fatalf("turn %d: stop %q, %v", turn, res.StopReason, err)
		}
		cpu = append(cpu, cpuTime()-c0)
		wall = append(wall, time.Since(t0))
	}
	if got := ws.files[dir+"/a.txt"]; !strings.Contains(got, fmt.Sprintf("edited %d", turns-1)) {
		b.Fatalf("the last edit is not in the file:\n%.400s", got)
	}
	return cpu, wall, stateDir, ns.SessionID
}

func meanMs(ds []time.Duration) float64 {
	var s time.Duration
	for _, d := range ds {
		s += d
	}
	return float64(s.Microseconds()) / 1000 / float64(len(ds))
}

// BenchmarkLongSession reports the mean CPU and wall per turn of the first and the last hundred
// turns, the slope of CPU per turn (a least-squares line through every turn, µs per 100 turns)
// and the transcript's size.
func BenchmarkLongSession(b *testing.B) {
	turns := scaleTurns()
	for b.Loop() {
		cpu, wall, stateDir, id := longSession(b, turns)
		var sx, sy, sxx, sxy float64
		for i, d := range cpu {
			x, y := float64(i), float64(d.Microseconds())
			sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
		}
		n := float64(len(cpu))
		slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
		b.ReportMetric(meanMs(cpu[:100]), "first100-cpu-ms/turn")
		b.ReportMetric(meanMs(cpu[len(cpu)-100:]), "last100-cpu-ms/turn")
		b.ReportMetric(meanMs(wall[:100]), "first100-wall-ms/turn")
		b.ReportMetric(meanMs(wall[len(wall)-100:]), "last100-wall-ms/turn")
		b.ReportMetric(slope*100, "slope-cpu-µs/100turns")
		if fi, err := os.Stat(filepath.Join(stateDir, "sessions", id+".jsonl")); err == nil {
			b.ReportMetric(float64(fi.Size())/float64(turns), "transcript-B/turn")
		}
	}
}

// wireClient does with each update what the connection does before the write (the bytes are
// then dropped): a decoded update is encoded as jsonrpc's append encoder encodes it; a stored
// one (UpdateStored) is checked as jsonrpc's Stream.WriteStoredUpdate checks it and copied into
// its envelope.
type wireClient struct {
	nopClient
	buf   []byte
	bytes int
}

func (c *wireClient) Update(sessionID string, u protocol.SessionUpdate) {
	c.buf = append(c.buf[:0], `{"jsonrpc":"2.0","method":"agent/session/update","params":`...)
	c.buf = protocol.AppendSessionNotification(c.buf, &protocol.SessionNotification{SessionID: sessionID, Update: u})
	c.bytes += len(c.buf) + 1
}

func (c *wireClient) UpdateStored(sessionID, _ string, update []byte) {
	if jscan.ValidValueEnd(update, 0) != len(update) || !utf8.Valid(update) {
		panic("a stored update that is not one JSON object")
	}
	c.buf = append(c.buf[:0], `{"jsonrpc":"2.0","method":"agent/session/update","params":{"sessionId":`...)
	c.buf = strconv.AppendQuote(c.buf, sessionID)
	c.buf = append(c.buf, `,"update":`...)
	c.buf = append(c.buf, update...)
	c.bytes += len(c.buf) + 2
}

// BenchmarkLoad100MB grows a real transcript (a 300-turn scripted session) to 100 MB by
// repeating its turns' records, then opens it in a fresh Manager with session/load (replayed to
// a client that encodes each update as the connection would, wireClient) and with resume.
func BenchmarkLoad100MB(b *testing.B) {
	_, _, stateDir, id := longSession(b, 300)
	path := filepath.Join(stateDir, "sessions", id+".jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	// The header is the first line; everything after it is turns' records.
	nl := bytes.IndexByte(data, '\n')
	head, body := data[:nl+1], data[nl+1:]
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.Write(head)
	size := len(head)
	for size < 100<<20 {
		w.Write(body)
		size += len(body)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	// The same turns as a session that compacted after every 300 turns (3.7 MB of transcript,
	// about 1 MB of history), keeping its last 4 messages: a real session of this length has
	// compacted many times, since a model's context holds far less than its history.
	cid := id + "c"
	cpath := filepath.Join(stateDir, "sessions", cid+".jsonl")
	cf, err := os.Create(cpath)
	if err != nil {
		b.Fatal(err)
	}
	cw := bufio.NewWriterSize(cf, 1<<20)
	cw.Write(bytes.Replace(head, []byte(`"id":"`+id+`"`), []byte(`"id":"`+cid+`"`), 1))
	compact, err := json.Marshal(record{T: recCompact, At: time.Now().UTC(), Summary: "The user asked for one line of a.txt to be edited at each turn; each was.", Keep: 4})
	if err != nil {
		b.Fatal(err)
	}
	for csize := len(head); csize < 100<<20; csize += len(body) + len(compact) + 1 {
		cw.Write(body)
		cw.Write(append(compact, '\n'))
	}
	if err := cw.Flush(); err != nil {
		b.Fatal(err)
	}
	cf.Close()
	os.Remove(filepath.Join(stateDir, "sessions", indexFile))
	var wc *wireClient
	open := func(b *testing.B, id string, replay bool) {
		wc = &wireClient{}
		m := NewManager(Deps{
			Client:     wc,
			Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
			Providers:  fakeSource{p: &loopProvider{reply: func(int) []providers.Event { return textReply("x") }}},
			Tools:      tools.NewRegistry(readTool{}, editTool{}),
			Settings:   func() config.Settings { return config.Settings{Mode: config.ModeAuto} },
			StateDir:   stateDir,
		})
		defer m.Shutdown(context.Background())
		p := protocol.SessionLoadParams{SessionID: id, Cwd: b.TempDir()}
		var err error
		if replay {
			_, err = m.Load(context.Background(), p)
		} else {
			_, err = m.Resume(context.Background(), p)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	// The CPU of each open beside its wall time: on a loaded machine the wall time is mostly
	// waiting for a core.
	for _, c := range []struct {
		name string
		id   string
	}{{"", id}, {"-compacted", cid}} {
		b.Run("load"+c.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				open(b, c.id, true)
			}
			b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(size)/(1<<20), "transcript-MiB")
			b.ReportMetric(float64(wc.bytes)/(1<<20), "wire-MiB")
		})
		b.Run("resume"+c.name, func(b *testing.B) {
			c0 := cpuTime()
			for b.Loop() {
				open(b, c.id, false)
			}
			b.ReportMetric(float64((cpuTime()-c0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// barrierProvider streams deltas text deltas of 5 bytes, holding every stream after the first
// half until all of a round's streams have reached it (release is closed), so that the
// sessions stream at once.
type barrierProvider struct {
	deltas  int
	reached chan struct{}
	release chan struct{}
}

func (p *barrierProvider) Stream(ctx context.Context, req *providers.Request) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		if len(req.Tools) == 0 { // title
			yield(providers.Event{Type: providers.EventTextDelta, Text: "t"})
			yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
			return
		}
		for i := range p.deltas {
			if i == p.deltas/2 {
				p.reached <- struct{}{}
				<-p.release
			}
			if !yield(providers.Event{Type: providers.EventTextDelta, Text: "word "}) {
				return
			}
		}
		yield(providers.Event{Type: providers.EventUsage, Usage: providers.Usage{Input: 100, Output: 10}})
		yield(providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn})
	}
}

func procStatusKiB(field string) float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(n)
		}
	}
	return 0
}

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// BenchmarkConcurrentSessions (issue 34 item 4) opens n persisted sessions in one Manager and
// has each stream a 400-delta reply at once (every stream held halfway until all have started),
// then closes them. It reports the RSS above idle with all of them mid-stream, the CPU per delta
// beside one session streaming alone (the anchor, same run), and the goroutines and open files
// left after they closed, beside before they opened.
func BenchmarkConcurrentSessions(b *testing.B) {
	const deltas = 400
	run := func(b *testing.B, m *Manager, prov *barrierProvider, n int) (cpu time.Duration, rssKiB float64) {
		ids := make([]string, n)
		for i := range ids {
			ns, err := m.New(context.Background(), protocol.SessionNewParams{Cwd: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			ids[i] = ns.SessionID
		}
		errs := make(chan error, n)
		c0 := cpuTime()
		for _, id := range ids {
			go func() {
				res, err := m.Prompt(context.Background(), protocol.PromptParams{SessionID: id, Prompt: []protocol.ContentBlock{protocol.TextBlock("stream")}})
				if err == nil && res.StopReason != protocol.StopEndTurn {
					err = fmt.Errorf("stop %q", res.StopReason)
				}
				errs <- err
			}()
		}
		for range n {
			<-prov.reached
		}
		rssKiB = procStatusKiB("VmRSS")
		close(prov.release)
		for range n {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
		cpu = cpuTime() - c0
		for _, id := range ids {
			if err := m.Close(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
		return cpu, rssKiB
	}
	for b.Loop() {
		prov := &barrierProvider{deltas: deltas, reached: make(chan struct{}, 100)}
		m := NewManager(Deps{
			Client:     nopClient{},
			Workspaces: func(string, *workspace.Roots) workspace.Workspace { return &fakeWS{files: map[string]string{}} },
			Providers:  fakeSource{p: prov},
			Tools:      tools.NewRegistry(readTool{}, editTool{}),
			Settings:   func() config.Settings { return config.Settings{Mode: config.ModeAuto} },
			StateDir:   b.TempDir(),
			NoTitles:   true,
		})
		// One session alone first: the anchor, and it warms what every session shares.
		prov.release = make(chan struct{})
		one, _ := run(b, m, prov, 1)
		runtime.GC()
		time.Sleep(50 * time.Millisecond)
		g0, fd0, idle := runtime.NumGoroutine(), openFDs(), procStatusKiB("VmRSS")
		prov.release = make(chan struct{})
		many, rss := run(b, m, prov, 100)
		runtime.GC()
		time.Sleep(200 * time.Millisecond)
		g1, fd1 := runtime.NumGoroutine(), openFDs()
		m.Shutdown(context.Background())
		b.ReportMetric(float64(one.Nanoseconds())/deltas/1000, "one-cpu-µs/delta")
		b.ReportMetric(float64(many.Nanoseconds())/(100*deltas)/1000, "100-cpu-µs/delta")
		b.ReportMetric((rss-idle)/1024, "rss-above-idle-MiB")
		b.ReportMetric(float64(g1-g0), "goroutines-left")
		b.ReportMetric(float64(fd1-fd0), "fds-left")
	}
}
