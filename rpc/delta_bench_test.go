package rpc

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/protocol"
)

// deltaRig is the daemon's write path for streamed text, from the engine's Update call to the
// bytes in a real OS pipe (the editor's stdin), with a reader that only counts what arrives.
type deltaRig struct {
	update func(text string)
	close  func()
	frames chan int64 // frames counted, sent when the pipe ends
	bytes  chan int64
}

func newDeltaRig(b *testing.B) *deltaRig {
	pr, pw, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	rig := &deltaRig{frames: make(chan int64, 1), bytes: make(chan int64, 1)}
	go func() {
		buf := make([]byte, 64<<10)
		var frames, total int64
		for {
			n, err := pr.Read(buf)
			// Every frame starts "Content-Length"; nothing in these bodies has a capital C.
			frames += int64(bytes.Count(buf[:n], []byte{'C'}))
			total += int64(n)
			if err != nil {
				break
			}
		}
		pr.Close()
		rig.frames <- frames
		rig.bytes <- total
	}()
	br, closeConn := bridgeOver(pw)
	c := br.Client()
	rig.update = func(text string) {
		c.Update("sess_4f1c2a9be0d3", protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk,
			MessageID: "msg_01", Content: &protocol.ContentBlock{Type: "text", Text: text}})
	}
	rig.close = closeConn
	return rig
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDeltasBackToBack streams 50,000 one-character deltas as fast as the engine can hand
// them over: notifications sent, bytes per delta, and CPU per delta (the whole process, the
// counting reader included).
func BenchmarkDeltasBackToBack(b *testing.B) {
	const n = 50_000
	for b.Loop() {
		rig := newDeltaRig(b)
		cpu0, t0 := cpuTime(), time.Now()
		for range n {
			rig.update("x")
		}
		rig.close()
		frames, total := <-rig.frames, <-rig.bytes
		wall, cpu := time.Since(t0), cpuTime()-cpu0
		b.ReportMetric(float64(frames), "notifications")
		b.ReportMetric(float64(total)/n, "bytes/delta")
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/delta")
		b.ReportMetric(float64(wall.Nanoseconds())/n, "wall-ns/delta")
	}
}

// BenchmarkDeltasLocalModel paces deltas as a fast local model does (500 tokens/s, one token a
// delta) for half a second: nothing should be held back or joined at this rate.
func BenchmarkDeltasLocalModel(b *testing.B) {
	const n, every = 250, 2 * time.Millisecond
	for b.Loop() {
		rig := newDeltaRig(b)
		t0 := time.Now()
		next := t0
		for range n {
			rig.update("tok ")
			next = next.Add(every)
			time.Sleep(time.Until(next))
		}
		rig.close()
		frames, total := <-rig.frames, <-rig.bytes
		wall := time.Since(t0)
		b.ReportMetric(float64(frames)/wall.Seconds(), "notifications/s")
		b.ReportMetric(float64(total)/n, "bytes/delta")
	}
}

// bridgeOver is the production pairing: editorbridge's bridge over jsonrpc's connection.
func bridgeOver(w *os.File) (*editorbridge.Bridge, func()) {
	c := jsonrpc.NewConn(nopRC{}, w, jsonrpc.Options{})
	return editorbridge.New(c, editorbridge.Capabilities{}, nil), func() { c.CloseStream() }
}

type nopRC struct{}

func (nopRC) Read([]byte) (int, error) { return 0, io.EOF }
func (nopRC) Close() error             { return nil }
