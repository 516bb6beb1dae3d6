package acceptance_test

// The inline-completion benchmark of issue 32 (docs/benchmarks.md, "Inline completions"): the
// real binary over its pipes, the fake editor, and internal/test/fakemodel's /v1/completions with a
// fixed 40 ms latency on loopback.

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

var (
	completionSamples = flag.Int("completion.samples", 100, "sequential completions timed by TestInlineCompletionBenchmark")
	completionStorm   = flag.Duration("completion.storm", 2*time.Second, "how long TestInlineCompletionBenchmark types at 20 requests a second (the issue's figure: 10s)")
)

// completionLog is the daemon's log level in TestInlineCompletionBenchmark: a user's (info) by
// default; the suite's other tests run at debug, whose per-request lines (written to stderr,
// redacted first) are part of what the figure would otherwise measure.
var completionLog = flag.String("completion.log", "info", "AGENTD_LOG of the daemon in TestInlineCompletionBenchmark")

var completionLatency = flag.Duration("completion.latency", 40*time.Millisecond, "the fake FIM server's fixed latency in TestInlineCompletionBenchmark")

// TestInlineCompletionBenchmark measures agentd's own time per completion (its round trip beyond
// that of an anchor doing the same HTTP request over the same kind of pipe, in the same run, both
// less the server's own time), and checks what a typist needs: typing at 20 requests a
// second keeps at most one model request in flight and never answers with a suggestion for a
// document the editor has changed since; typing through a suggestion is answered without a
// model call at least 90 % of the time. It logs the figures; docs/benchmarks.md has the command.
func TestInlineCompletionBenchmark(t *testing.T) {
	t.Parallel()
	fimLatency := *completionLatency
	prefix := "package add\n\nfunc Add(a, b int) int {\n\t"
	const suggestion = "return a + b"
	fm := fakemodel.New(fakemodel.Script{FIM: &fakemodel.FIMScript{
		Rules:   []fakemodel.FIMRule{{After: "int {\n\t", Text: suggestion}},
		Default: "x := 1",
		DelayMs: int(fimLatency / time.Millisecond),
	}})
	url, err := fm.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer fm.Close()
	settings, _ := json.Marshal(map[string]any{
		"provider":   "local",
		"providers":  map[string]any{"local": map[string]any{"apiType": "openai", "baseUrl": url, "model": "coder"}},
		"completion": map[string]any{"provider": "local", "model": "coder-fim", "endpoint": "completions"},
	})
	e := startIn(t, fakeeditor.Full(), settings, "", realDir(t), "AGENTD_LOG="+*completionLog)
	path := e.writeFile("add.go", "package add\n")
	uri := "file://" + path
	type list struct {
		Items []struct {
			InsertText string `json:"insertText"`
		} `json:"items"`
	}
	complete := func(line, char int) (list, error) {
		var res list
		err := e.ed.Call(ctxT(t), "textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": uri},
			"position":     map[string]any{"line": line, "character": char},
		}, &res)
		return res, err
	}
	lineCol := func(text string) (int, int) {
		return strings.Count(text, "\n"), len(text) - strings.LastIndexByte(text, '\n') - 1
	}

	// 1. Sequential completions, each for a new document text (a comment line that changes), so
	// each goes to the model; interleaved with the same completion made by the anchor
	// (fimanchor_test.go), a process that only does the pipe and the HTTP request, so that both
	// see the same machine at the same moment. Each round trip is taken less the server's own
	// time for it (its timer overshoots under load), and agentd's own time is what its round
	// trip takes beyond the anchor's.
	anchor := startFIMAnchor(t, url)
	load0 := loadAverage()
	var own, floor, overshoot []time.Duration
	timed := func(f func()) time.Duration {
		busy := fm.FIMStats().Busy
		t0 := time.Now()
		f()
		d := time.Since(t0)
		server := fm.FIMStats().Busy - busy
		overshoot = append(overshoot, server-fimLatency)
		return d - server
	}
	for i := range *completionSamples {
		before := fmt.Sprintf("package add\n\n// v%d\nfunc Add(a, b int) int {\n\t", i)
		l, c := lineCol(before)
		e.ed.Open(path, before+"\n}\n")
		viaAgentd := func() {
			res, err := complete(l, c)
			if err != nil || len(res.Items) != 1 {
				t.Fatalf("completion %d: %+v %v", i, res, err)
			}
		}
		viaAnchor := func() {
			var res list
			err := anchor.Call(ctxT(t), "textDocument/inlineCompletion", map[string]any{
				"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": l, "character": c},
				"prompt": before, "suffix": "\n}\n",
			}, &res)
			if err != nil || len(res.Items) != 1 || res.Items[0].InsertText != suggestion {
				t.Fatalf("anchor completion %d: %+v %v", i, res, err)
			}
		}
		if i%2 == 0 { // neither always goes first, when the other has just woken the machine
			own = append(own, timed(viaAgentd))
			floor = append(floor, timed(viaAnchor))
		} else {
			floor = append(floor, timed(viaAnchor))
			own = append(own, timed(viaAgentd))
		}
	}
	load1 := loadAverage()
	// The pairs (each agentd sample less the anchor's beside it): a load spike that hits only
	// one of the two shows in this tail, where the difference of the p99s can even go negative.
	paired := make([]time.Duration, len(own))
	for i := range own {
		paired[i] = own[i] - floor[i]
	}
	slices.Sort(paired)
	slices.Sort(own)
	slices.Sort(floor)
	slices.Sort(overshoot)
	pct := func(d []time.Duration, p int) time.Duration { return d[len(d)*p/100] }
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	t.Logf("load average %s → %s (%d CPUs); %d completions each, %v server latency; the server's timer overshoot p50 %v, p99 %v",
		load0, load1, runtime.NumCPU(), len(own), fimLatency, r(pct(overshoot, 50)), r(pct(overshoot, 99)))
	t.Logf("round trip less the server's time: agentd p50 %v, p99 %v, max %v; anchor p50 %v, p99 %v, max %v",
		r(pct(own, 50)), r(pct(own, 99)), r(own[len(own)-1]), r(pct(floor, 50)), r(pct(floor, 99)), r(floor[len(floor)-1]))
	t.Logf("agentd's own time per completion (agentd less the anchor): p50 %v, p99 %v (goal ≤ 1ms, ≤ 3ms); pairwise p50 %v, p90 %v, p99 %v",
		r(pct(own, 50)-pct(floor, 50)), r(pct(own, 99)-pct(floor, 99)), r(pct(paired, 50)), r(pct(paired, 90)), r(pct(paired, 99)))

	// More anchors, from the same run: one cheap request's round trip over agentd's pipe
	// (agent/providers/list, answered from memory) and one loopback HTTP request to the same
	// server (GET /v1/models). A completion in the completions dialect makes two pipe round trips
	// (the request, reading the document) and one HTTP request.
	var pipe, loop []time.Duration
	for range *completionSamples {
		t0 := time.Now()
		if err := e.ed.Call(ctxT(t), "agent/providers/list", map[string]any{}, nil); err != nil {
			t.Fatal(err)
		}
		pipe = append(pipe, time.Since(t0))
		t0 = time.Now()
		resp, err := http.Get(url + "/models")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		loop = append(loop, time.Since(t0))
	}
	slices.Sort(pipe)
	slices.Sort(loop)
	t.Logf("one pipe round trip to agentd p50 %v, p99 %v; one loopback HTTP request p50 %v, p99 %v",
		r(pct(pipe, 50)), r(pct(pipe, 99)), r(pct(loop, 50)), r(pct(loop, 99)))

	// 2. A typing storm: a keystroke every 50 ms that does not follow the suggestion, each
	// asking for a completion without waiting for the previous answer.
	logFrom := len(e.ed.Messages())
	before := fm.FIMStats()
	var mu sync.Mutex
	var sent, outdated, answered, empty int
	var wg sync.WaitGroup
	tick := time.NewTicker(50 * time.Millisecond)
	deadline := time.Now().Add(*completionStorm)
	typed := ""
	for time.Now().Before(deadline) {
		<-tick.C
		typed += "z"
		text := prefix + typed
		mu.Lock()
		e.ed.Open(path, text+"\n}\n")
		sent++
		me := sent
		mu.Unlock()
		l, c := lineCol(text)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := complete(l, c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("storm completion %d: %v", me, err)
				return
			}
			answered++
			if len(res.Items) == 0 {
				empty++
				return
			}
			if me != sent { // the editor has changed the document since it asked
				outdated++
			}
		}()
	}
	tick.Stop()
	wg.Wait()
	st := fm.FIMStats()
	stale := staleAnswers(e.ed.Messages()[logFrom:])
	t.Logf("typing storm, 20 requests/s for %v: %d requests, %d answered (%d empty), %d model requests, at most %d in flight, %d answers for an outdated document (%d of them written after agentd had read the newer request)",
		*completionStorm, sent, answered, empty, st.Requests-before.Requests, st.MaxInFlight, outdated, stale)
	if st.MaxInFlight > 1 {
		t.Errorf("%d model requests in flight at once, want at most 1", st.MaxInFlight)
	}
	// An outdated answer is one that reaches the editor after it sent a newer keystroke. Most
	// merely crossed that keystroke on the pipe: agentd wrote them before it could read it, and
	// the editor drops them (Neovim's changedtick, VS Code's cancellation token); how many depends
	// on the machine's load. agentd's own share, stale, is an answer written after it had read
	// the newer request (it supersedes the older one as the request is read, and the writer
	// swaps a superseded suggestion for the empty list as it queues it): the goal is none. The
	// suite's short run only reports it and the benchmark run (-completion.storm given) holds it.
	if stale > 0 {
		if stormGiven() {
			t.Errorf("%d suggestions written after agentd had read a newer request for the document", stale)
		} else {
			t.Logf("%d suggestions written after agentd had read a newer request (not checked in the short run)", stale)
		}
	}

	// 3. Typing through the suggestion: one model call, then one request per typed character.
	e.ed.Open(path, prefix+"\n}\n")
	l, c := lineCol(prefix)
	if res, err := complete(l, c); err != nil || len(res.Items) != 1 || res.Items[0].InsertText != suggestion {
		t.Fatalf("first suggestion %+v %v", res, err)
	}
	calls := fm.FIMStats().Requests
	n, fromPrevious := 0, 0
	for i := 1; i < len(suggestion); i++ {
		text := prefix + suggestion[:i]
		e.ed.Open(path, text+"\n}\n")
		l, c := lineCol(text)
		res, err := complete(l, c)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if len(res.Items) == 1 && res.Items[0].InsertText == suggestion[i:] {
			fromPrevious++
		}
	}
	modelCalls := fm.FIMStats().Requests - calls
	share := float64(n-modelCalls) / float64(n)
	t.Logf("typing through a suggestion: %d of %d requests answered without a model call (%.0f %%), %d with the rest of the suggestion", n-modelCalls, n, share*100, fromPrevious)
	if share < 0.9 {
		t.Errorf("%.0f %% answered without a model call, want at least 90 %%", share*100)
	}
}

// staleAnswers counts, in the editor's log of a storm, the non-empty completion answers agentd
// wrote after it had read a newer completion request for the document: agentd's own share of
// outdated answers, which must be none. The proof that it had read the newer request is on the
// same ordered pipe: agentd wrote the agent/fs/read_text_file of that request (the k-th
// completion's own read is its k-th; a (k+1)-th before its answer belongs to a newer one). An
// answer that merely crossed the newer request on the pipe, written before agentd read it, is
// the editor's to drop (Neovim's changedtick, VS Code's cancellation token).
func staleAnswers(lines []string) int {
	ordinal := map[string]int{} // request id → its place among the storm's completions
	for _, f := range parseLog(lines, "editor → agentd ") {
		if f.Method == "textDocument/inlineCompletion" {
			ordinal[string(f.ID)] = len(ordinal)
		}
	}
	reads, stale := 0, 0
	for _, f := range parseLog(lines, "agentd → editor ") {
		if f.Method == "agent/fs/read_text_file" {
			reads++
			continue
		}
		k, ok := ordinal[string(f.ID)]
		if !ok || f.Method != "" || f.Result == nil {
			continue
		}
		var r struct {
			Items []any `json:"items"`
		}
		if json.Unmarshal(f.Result, &r) == nil && len(r.Items) > 0 && reads > k+1 {
			stale++
		}
	}
	return stale
}

// stormGiven reports whether -completion.storm was given on the command line: the benchmark run,
// whose figures are checked against the goals.
func stormGiven() bool {
	given := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "completion.storm" {
			given = true
		}
	})
	return given
}

// loadAverage is the machine's 1-minute load average, "?" where /proc/loadavg is not there.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}
