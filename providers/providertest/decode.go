package providertest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

// SSEFiles lists the recorded SSE bodies of a dialect: its own in testdata/providers/<dialect>
// and, when ../shared is there, the shared fixtures' (no skip: the own ones suffice).
func SSEFiles(t testing.TB, dialect string) []string {
	root := RepoRoot(t)
	files, _ := filepath.Glob(filepath.Join(root, "testdata", "providers", dialect, "*.sse"))
	shared, _ := filepath.Glob(filepath.Join(filepath.Dir(root), "shared", "fixtures", "providers", dialect, "*.sse"))
	return append(files, shared...)
}

// EveryData reports whether body reads as SSE (events up to 1 MiB) and valid holds for the data
// of every event. Fuzzers use it to tell input a strict decoder must accept from input it may
// refuse.
func EveryData(body []byte, valid func(data string) bool) bool {
	for ev, err := range httpsse.ReadEvents(bytes.NewReader(body), 1<<20) {
		if err != nil || !valid(string(ev.Data)) {
			return false
		}
	}
	return true
}

// FastPathAgrees fails t when a dialect's fast decoding path and its encoding/json path turn
// body into different events. decode runs the dialect's decoder over an SSE body, with the fast
// path or without it (noFast); label names body in the failure.
func FastPathAgrees(t testing.TB, label string, body []byte, decode func(body []byte, noFast bool) []providers.Event) {
	t.Helper()
	fast, slow := decode(body, false), decode(body, true)
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: fast path differs:\nfast:\n%s\nslow:\n%s", label, Dump(fast), Dump(slow))
	}
}

// FastPathAgreesOnFiles is FastPathAgrees over every file; it fails when there is none.
func FastPathAgreesOnFiles(t testing.TB, files []string, decode func(body []byte, noFast bool) []providers.Event) {
	t.Helper()
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		FastPathAgrees(t, filepath.Base(f), body, decode)
	}
}

// ReadSSE reads body as SSE (events up to 1 MiB), the way a dialect's Stream sees it without
// the network, and hands fn each event's type and data until fn returns false. It returns the
// error that stopped the reading, if any.
func ReadSSE(body []byte, fn func(typ string, data []byte) bool) error {
	for ev, err := range httpsse.ReadEvents(bytes.NewReader(body), 1<<20) {
		if err != nil {
			return err
		}
		if !fn(ev.Type, ev.Data) {
			break
		}
	}
	return nil
}

// AddSeeds adds the contents of files to f's corpus (unreadable ones are left out).
func AddSeeds(f *testing.F, files []string) {
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
}

// EndsOnce fails t unless evs hold exactly one Completed or Failed event, and it is the last.
func EndsOnce(t testing.TB, evs []providers.Event) {
	t.Helper()
	terminal := 0
	for _, ev := range evs {
		if ev.Type == providers.EventCompleted || ev.Type == providers.EventFailed {
			terminal++
		}
	}
	if last := len(evs) - 1; terminal != 1 || evs[last].Type != providers.EventCompleted && evs[last].Type != providers.EventFailed {
		t.Fatalf("%d terminal events:\n%s", terminal, Dump(evs))
	}
}
