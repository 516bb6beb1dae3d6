package httpsse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentd-dev/agentd/providers/httpsse"
	"github.com/agentd-dev/agentd/providers/providertest"
	sse "github.com/tmaxmax/go-sse"
)

// The event reader replaced go-sse's on the streaming path; these tests hold it to go-sse's
// behaviour (the reference the dialects were written against) on every recorded stream, on the
// corner cases of the format, and on fuzzed input, read whole and one byte at a time.

type parsed struct {
	events []string // "type|data"
	failed bool
}

func ours(r io.Reader) parsed {
	var p parsed
	for ev, err := range httpsse.ReadEvents(r, 1<<20) {
		if err != nil {
			p.failed = true
			break
		}
		p.events = append(p.events, ev.Type+"|"+string(ev.Data))
	}
	return p
}

func theirs(body []byte) parsed {
	var p parsed
	for ev, err := range sse.Read(bytes.NewReader(body), &sse.ReadConfig{MaxEventSize: 1 << 20}) {
		if err != nil {
			p.failed = true
			break
		}
		p.events = append(p.events, ev.Type+"|"+ev.Data)
	}
	return p
}

func agree(t *testing.T, label string, body []byte) {
	t.Helper()
	want := theirs(body)
	for _, r := range []struct {
		how string
		r   io.Reader
	}{{"whole", bytes.NewReader(body)}, {"byte by byte", iotest.OneByteReader(bytes.NewReader(body))}} {
		if got := ours(r.r); !reflect.DeepEqual(got, want) {
			t.Errorf("%s, read %s: %q failed=%v\ngo-sse: %q failed=%v", label, r.how, got.events, got.failed, want.events, want.failed)
		}
	}
}

func TestEventReaderAgreesWithGoSSEOnFixtures(t *testing.T) {
	root := providertest.RepoRoot(t)
	var files []string
	for _, pattern := range []string{
		filepath.Join(root, "testdata", "providers", "*", "*.sse"),
		filepath.Join(filepath.Dir(root), "shared", "fixtures", "providers", "*", "*.sse"),
	} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("only %d fixtures found", len(files))
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, f, body)
	}
}

var corners = []string{
	"data: a\n\n",
	"data:a\n\n",
	"data:  two spaces\n\n",
	"data: a\ndata: b\n\n",
	"data: a\r\n\r\n",
	"data: a\r\rdata: b\r\r",
	"data: a\r\ndata: b\n\r\n",
	"data\n\n",
	"data\ndata\n\n",
	"event: x\n\n",
	"event: x\ndata: 1\n\ndata: 2\n\n",
	"event: a\ndata: 1\n\nevent: a\ndata: 2\n\nevent: b\ndata: 3\n\n",
	"id: 7\n\n",
	"id: a\x00b\n\n",
	"retry: 100\n\n",
	"retry: 100\ndata: r\n\n",
	": comment\n\n",
	": comment\ndata: c\n\n",
	"datum: x\n\n",
	"verylongname: x\ndata: y\n\n",
	"DATA: x\n\n",
	"data: no end",
	"data: one line\n",
	"data: a\n\ndata: cut",
	"\n\n\ndata: after blanks\n\n",
	"\xEF\xBB\xBFdata: bom\n\n",
	"\n\xEF\xBB\xBFdata: bom after a blank line\n\n",
	"\xEF\xBB\xBF\ndata: lone bom\n\n",
	"data: x\n\n\xEF\xBB\xBFdata: second bom\n\n",
	"data: {\"a\":1}\n\ndata: [DONE]\n\n",
	"event: error\ndata: {\"error\":{}}\n\n",
	"data: a\n\r",
	"data: a\r",
	"\r\n\r\ndata: a\r\n\r\n",
	"data: :colon\n\n",
	"data:\n\n",
	"data: \n\n",
	"event:\ndata: e\n\n",
}

func TestEventReaderAgreesWithGoSSEOnCorners(t *testing.T) {
	for _, c := range corners {
		agree(t, fmt.Sprintf("%q", c), []byte(c))
	}
}

func FuzzEventReaderAgreesWithGoSSE(f *testing.F) {
	for _, c := range corners {
		f.Add([]byte(c))
	}
	providertest.AddSeeds(f, providertest.SSEFiles(f, "openai"))
	f.Fuzz(func(t *testing.T, body []byte) {
		agree(t, "fuzzed input", body)
	})
}

// Data is only valid until the next event: the reader reuses its memory, which is what makes an
// event free of allocations. This pins that contract down (a dialect copies what it keeps).
func TestEventDataIsReusedByTheNextEvent(t *testing.T) {
	var first []byte
	n := 0
	for ev, err := range httpsse.ReadEvents(strings.NewReader("data: first\n\ndata: other\n\n"), 0) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1 {
			first = ev.Data
		}
	}
	if n != 2 || string(first) != "other" {
		t.Fatalf("%d events, first event's data now %q (want it overwritten by the second)", n, first)
	}
}

func TestEventReaderLimitAndErrors(t *testing.T) {
	big := "data: " + strings.Repeat("x", 64<<10) + "\n\n"
	count := func(r io.Reader, max int) (int, error) {
		n := 0
		for _, err := range httpsse.ReadEvents(r, max) {
			if err != nil {
				return n, err
			}
			n++
		}
		return n, nil
	}
	if n, err := count(strings.NewReader(big+big), 0); n != 2 || err != nil {
		t.Fatalf("under the limit: %d events, %v", n, err)
	}
	// Over the limit, whether the line is long or the event has many short lines.
	many := strings.Repeat("data: 0123456789\n", 4<<10) + "\n"
	for _, body := range []string{"data: small\n\n" + big, "data: small\n\n" + many} {
		n, err := count(strings.NewReader(body), 32<<10)
		if n != 1 || !errors.Is(err, httpsse.ErrEventTooLong) {
			t.Fatalf("over the limit: %d events, %v", n, err)
		}
	}
	// A read error ends the stream with that error; the event it cut is not dispatched.
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: cut"), iotest.ErrReader(boom))
	if n, err := count(r, 0); n != 1 || !errors.Is(err, boom) {
		t.Fatalf("read error: %d events, %v", n, err)
	}
}

func BenchmarkEventReader(b *testing.B) {
	body := []byte(strings.Repeat(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null}]}`+"\n\n", 1000))
	b.Run("httpsse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for range httpsse.ReadEvents(bytes.NewReader(body), 0) {
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/event")
	})
	b.Run("go-sse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for range sse.Read(bytes.NewReader(body), &sse.ReadConfig{MaxEventSize: httpsse.DefaultMaxEventSize}) {
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/event")
	})
}
