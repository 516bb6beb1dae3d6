package main

// The kill -9 fault run (issue 19): kill the daemon at a random point of a streaming reply, load
// the session in a new process, and compare what the replay holds with what the editor had been
// shown before the kill.

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

var (
	kills     = flag.Int("kills", 20, "kill -9 runs in the kill9 fault run")
	killMinMs = flag.Int("kill-min-ms", 0, "the earliest kill point, ms after the prompt was sent")
	killMaxMs = flag.Int("kill-max-ms", 3000, "the latest kill point, ms after the prompt was sent")
)

// shown is what one process showed the editor for one session.
type shown struct {
	mu          sync.Mutex
	text        strings.Builder
	calls       map[string]bool
	interrupted int // updates marked agentd/interrupted
}

func (s *shown) watch(sid string) func([]byte) {
	return func(body []byte) {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
				Update    struct {
					Kind       string          `json:"sessionUpdate"`
					Content    json.RawMessage `json:"content"` // an object for chunks, a list for tool calls
					ToolCallID string          `json:"toolCallId"`
					Meta       map[string]any  `json:"_meta"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "agent/session/update" || m.Params.SessionID != sid {
			return
		}
		u := m.Params.Update
		s.mu.Lock()
		defer s.mu.Unlock()
		if u.Meta["agentd/interrupted"] == true {
			s.interrupted++
		}
		switch u.Kind {
		case "agent_message_chunk":
			var c struct {
				Text string `json:"text"`
			}
			json.Unmarshal(u.Content, &c)
			s.text.WriteString(c.Text)
		case "tool_call":
			s.calls[u.ToolCallID] = true
		}
	}
}

func (s *shown) get() (string, map[string]bool, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := map[string]bool{}
	for k := range s.calls {
		calls[k] = true
	}
	return s.text.String(), calls, s.interrupted
}

func kill9Run(bin string) error {
	var lost, lostMax, recovered, partial, callsLost, answered int
	for i := range *kills {
		r, err := kill9Once(bin, time.Duration(*killMinMs+rand.IntN(max(1, *killMaxMs-*killMinMs)))*time.Millisecond)
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		report("kill9 run %2d: killed at %4d ms; shown %5d bytes, %d call(s); replayed %5d bytes (%d updates marked interrupted), %d call(s); next prompt %s\n",
			i+1, r.at.Milliseconds(), r.shownBytes, r.shownCalls, r.replayedBytes, r.interrupted, r.replayedCalls, r.next)
		if r.prefix {
			recovered++
		} else {
			partial++
		}
		if d := r.shownBytes - r.replayedBytes; d > 0 {
			lost += d
			lostMax = max(lostMax, d)
		}
		callsLost += r.callsLost
		if r.next == "end_turn" {
			answered++
		}
	}
	report("kill9: %d runs; the replay began with everything shown in %d, fell short in %d (at most %d bytes, %d in all); %d shown call(s) missing from replays; the next prompt answered in %d\n",
		*kills, recovered, partial, lostMax, lost, callsLost, answered)
	return nil
}

type kill9Result struct {
	at                        time.Duration
	shownBytes, replayedBytes int
	shownCalls, replayedCalls int
	callsLost, interrupted    int
	prefix                    bool // the replayed text starts with all the text shown
	next                      string
}

func kill9Once(bin string, at time.Duration) (kill9Result, error) {
	res := kill9Result{at: at}
	root, err := turnRoot()
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(root)
	args, _ := json.Marshal(map[string]string{"path": "b.txt", "content": strings.Repeat("line of the file\n", 1500)})
	fm := fakemodel.New(fakemodel.Script{Turns: []fakemodel.Turn{
		{Text: strings.Repeat("word ", 600), ChunkDelayMs: 2, ArgsChunkSize: 128,
			ToolCalls: []fakemodel.ToolCall{{ID: "call_w", Name: "create_file", Arguments: args}}},
		{Text: "Resumed."},
	}, Routes: []fakemodel.Route{titleRoute}})
	url, err := fm.Start("127.0.0.1:0")
	if err != nil {
		return res, err
	}
	defer fm.Close()

	c, sid, err := session(bin, url, root)
	if err != nil {
		return res, err
	}
	home := c.home
	before := &shown{calls: map[string]bool{}}
	c.onFrame = before.watch(sid)
	c.permit = "reject_once"
	go c.prompt(sid, "write b.txt", time.Minute) // ends with the process
	time.Sleep(at)
	c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	c.cmd.Wait()
	text, calls, _ := before.get()
	res.shownBytes, res.shownCalls = len(text), len(calls)

	c2, err := startIn(bin, home)
	if err != nil {
		return res, err
	}
	defer c2.close() // removes home
	after := &shown{calls: map[string]bool{}}
	c2.onFrame = after.watch(sid)
	if err := c2.initialize(url); err != nil {
		return res, err
	}
	if _, err := c2.call("agent/session/load", map[string]any{"sessionId": sid, "cwd": root, "mcpServers": []any{}}, 30*time.Second); err != nil {
		return res, err
	}
	rtext, rcalls, interrupted := after.get()
	res.replayedBytes, res.replayedCalls, res.interrupted = len(rtext), len(rcalls), interrupted
	res.prefix = strings.HasPrefix(rtext, text)
	for id := range calls {
		if !rcalls[id] {
			res.callsLost++
		}
	}
	if err := c2.prompt(sid, "go on", time.Minute); err != nil {
		res.next = err.Error()
	} else {
		res.next = "end_turn"
	}
	return res, nil
}
