package session

// Issue 34 item 3: a long scripted session (a read and an edit on every turn, the history kept),
// its CPU per turn from the first hundred turns to the last, and session/load and resume of a
// 100 MB transcript. bench/scale.sh runs them; docs/benchmarks.md records the figures.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/config"
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

// BenchmarkLoad100MB grows a real transcript (a 300-turn scripted session) to 100 MB by
// repeating its turns' records, then opens it in a fresh Manager with session/load (replayed to
// a client that drops the updates) and with resume, and lists the sessions.
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
	os.Remove(filepath.Join(stateDir, "sessions", indexFile))
	open := func(b *testing.B, replay bool) {
		m := NewManager(Deps{
			Client:     nopClient{},
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
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			open(b, true)
		}
		b.ReportMetric(float64(size)/(1<<20), "transcript-MiB")
	})
	b.Run("resume", func(b *testing.B) {
		for b.Loop() {
			open(b, false)
		}
	})
}
