package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

// memDoer answers every request with body, from memory, so a benchmark measures agentd and not
// the loopback stack.
type memDoer struct{ body []byte }

func (d memDoer) Do(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: 200,
		Header:     http.Header{"Content-Type": {"text/event-stream"}},
		Body:       io.NopCloser(bytes.NewReader(d.body)),
		Request:    req,
	}, nil
}

// benchStream builds a stream in OpenAI's real chunk shape (every chunk carries id, object,
// created, model, system_fingerprint, logprobs and obfuscation, as gpt-4o sends them): n text
// deltas, then one tool call whose arguments come in n fragments, the finish, the usage chunk and
// [DONE]. It returns the body and the number of deltas.
func benchStream(n int) ([]byte, int) {
	var b bytes.Buffer
	head := `data: {"id":"chatcmpl-DuLdCoxuLDs8HRMlOuz0Bi4wgi4XJ","object":"chat.completion.chunk","created":1782321890,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_86f87dc6f1","choices":[{"index":0,"delta":`
	tail := `,"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"kGEVHK9STFy0L"}` + "\n\n"
	b.WriteString(head + `{"role":"assistant","content":"","refusal":null}` + tail)
	words := []string{"The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ",", " and", " then"}
	for i := range n {
		b.WriteString(head + `{"content":"` + words[i%len(words)] + `"}` + tail)
	}
	b.WriteString(head + `{"tool_calls":[{"index":0,"id":"call_MqgU2oanL8jcyDZxTkMMo64j","type":"function","function":{"name":"write","arguments":""}}]}` + tail)
	b.WriteString(head + `{"tool_calls":[{"index":0,"function":{"arguments":"{\"content\":\""}}]}` + tail)
	for i := range n {
		b.WriteString(head + `{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.TrimSpace(words[i%len(words)]) + ` "}}]}` + tail)
	}
	b.WriteString(head + `{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}` + tail)
	b.WriteString(`data: {"id":"chatcmpl-DuLdCoxuLDs8HRMlOuz0Bi4wgi4XJ","object":"chat.completion.chunk","created":1782321890,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_86f87dc6f1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null,"obfuscation":"EkBNlqIgr3"}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-DuLdCoxuLDs8HRMlOuz0Bi4wgi4XJ","object":"chat.completion.chunk","created":1782321890,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_86f87dc6f1","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":` + strconv.Itoa(2*n) + `,"total_tokens":22,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":""}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes(), 2*n + 2
}

// BenchmarkStreamDecode decodes a recorded-shape stream end to end: the provider's Stream builds
// and sends the request, httpsse's event reader parses the body, the decoder yields neutral
// events. ns/delta and allocs/delta divide the whole run (request included) by the number of
// deltas.
func BenchmarkStreamDecode(b *testing.B) {
	body, deltas := benchStream(500)
	p, err := newProvider(providers.Config{Model: "gpt-4o", APIKey: "k", BaseURL: "https://api.openai.com/v1"}, &httpsse.Transport{Doer: memDoer{body}, ReadPace: -1})
	if err != nil {
		b.Fatal(err)
	}
	req := testRequest()
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	allocs0, cpu0 := mallocs(), cpuTime()
	for b.Loop() {
		n := 0
		for ev := range p.Stream(ctx, req) {
			if ev.Type == providers.EventTextDelta || ev.Type == providers.EventToolCallArgsDelta {
				n++
			}
			if ev.Type == providers.EventFailed {
				b.Fatal(ev.Err)
			}
		}
		if n != deltas {
			b.Fatalf("%d deltas, want %d", n, deltas)
		}
	}
	allocs1, cpu1 := mallocs(), cpuTime()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
	// CPU time (user+system of the whole process, GC included) is what a delta costs even when
	// other work shares the cores and stretches the wall clock.
	b.ReportMetric(float64(cpu1-cpu0)/float64(b.N*deltas), "cpu-ns/delta")
	b.ReportMetric(float64(allocs1-allocs0)/float64(b.N*deltas), "allocs/delta")
}

// BenchmarkDecoderOnly is the decoder alone over pre-split event data, without SSE parsing.
func BenchmarkDecoderOnly(b *testing.B) {
	body, deltas := benchStream(500)
	var frames [][]byte
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		if d, ok := bytes.CutPrefix(ev, []byte("data: ")); ok {
			frames = append(frames, d)
		}
	}
	emit := func(providers.Event) bool { return true }
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		d := decoder{who: "bench"}
		for _, f := range frames {
			if !d.event("", f, emit) {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*deltas), "cpu-ns/delta")
}

func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// cpuTime is the process's user+system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
