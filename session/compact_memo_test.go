package session

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentd-dev/agentd/providers"
)

func resultExchange(i int, size int, image bool) []providers.Message {
	id := fmt.Sprintf("c%d", i)
	res := providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartToolResult, ToolCallID: id, ToolName: "read_file", Text: strings.Repeat(fmt.Sprintf("result %d ", i), size)}}}
	if image {
		res.Parts = append(res.Parts, providers.Part{Type: providers.PartImage, ToolCallID: id, MimeType: "image/png", Data: []byte("png")})
	}
	return []providers.Message{
		{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartToolCall, ToolCallID: id, ToolName: "read_file", Args: []byte(`{}`)}}},
		res,
	}
}

// The cache changes nothing the model is sent: over a history that grows, is rewound (shorter,
// then grown again in place or in a new array), compacted (a new slice) and amended, every
// request's messages equal elideToolResults' over the same history, and the stored history is
// never changed.
func TestElideCacheSameAsWithout(t *testing.T) {
	for _, minSaving := range []int{elideMinSaving, 600, 0} {
		t.Run(fmt.Sprint("minSaving=", minSaving), func(t *testing.T) { elideCacheSameAsWithout(t, minSaving) })
	}
}

func elideCacheSameAsWithout(t *testing.T, minSaving int) {
	for seed := range uint64(8) {
		r := rand.New(rand.NewPCG(seed, 1))
		var c elideCache
		var gen uint64
		var hist []providers.Message
		n := 0
		for step := range 300 {
			switch op := r.IntN(20); {
			case op == 0 && len(hist) > 4: // a rewind: the restore's [:k:k]
				k := r.IntN(len(hist))
				hist = hist[:k:k]
			case op == 1 && len(hist) > 4: // a shortening that appends overwrite in place, unseen
				was := len(hist)
				for hist = hist[:r.IntN(len(hist))]; len(hist) < was; {
					n++
					hist = append(hist, resultExchange(n, 1+r.IntN(120), false)...)
				}
			case op == 2 && len(hist) > 4: // a compaction: a new slice, the last few kept
				keep := r.IntN(len(hist))
				hist = append([]providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "summary"}}}}, hist[len(hist)-keep:]...)
			case op == 3 && len(hist) > 0: // an amended last message, in place
				hist[len(hist)-1] = providers.Message{Role: hist[len(hist)-1].Role, Parts: []providers.Part{{Type: providers.PartText, Text: "amended"}}}
				gen++
			case op == 4:
				hist = append(hist, providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: "next"}}})
			default:
				n++
				hist = append(hist, resultExchange(n, 1+r.IntN(120), r.IntN(4) == 0)...)
			}
			before := fmt.Sprint(hist)
			snap := hist[:len(hist):len(hist)]
			got, stable := c.get(snap, gen, keepToolResults, elideHead, elideBlock, minSaving)
			want := elideToolResults(snap, keepToolResults, elideHead, elideBlock, minSaving)
			if w := statelessStable(snap, minSaving); stable != w {
				t.Fatalf("seed %d step %d: stable %d, want %d", seed, step, stable, w)
			}
			if len(got) == 0 && len(want) == 0 {
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d: the cache sent other messages than elideToolResults:\n got %.600v\nwant %.600v", seed, step, got, want)
			}
			if fmt.Sprint(hist) != before {
				t.Fatalf("seed %d step %d: the stored history changed", seed, step)
			}
		}
	}
}

// Over an append-only history an older result is cut once: the next request's text is the very
// string of the request before, and the messages before the newest ones are not copied again.
func TestElideCacheCutsOnce(t *testing.T) {
	var c elideCache
	var hist []providers.Message
	var prev []providers.Message
	for i := range 40 {
		hist = append(hist, resultExchange(i, 200, false)...)
		got, _ := c.get(hist[:len(hist):len(hist)], 0, keepToolResults, elideHead, elideBlock, 0)
		for j := range prev {
			a, b := prev[j].Parts[0].Text, got[j].Parts[0].Text
			if prev[j].Parts[0].Type == providers.PartToolResult && len(a) < len(hist[j].Parts[0].Text) && unsafe.StringData(a) != unsafe.StringData(b) {
				t.Fatalf("request %d: message %d was cut again", i, j)
			}
		}
		prev = got
	}
	if !strings.Contains(prev[1].Parts[0].Text, "more bytes of this older read_file result were elided") {
		t.Fatalf("the oldest result was not elided: %.200s", prev[1].Parts[0].Text)
	}
	if !strings.HasSuffix(prev[len(prev)-1].Parts[0].Text, "result 39 ") {
		t.Fatalf("the newest result was not sent whole")
	}
}

// statelessStable is the cache's stable figure computed from scratch: the index of the message
// holding the oldest result sent whole, or the number of messages.
func statelessStable(hist []providers.Message, minSaving int) int {
	var saves []int
	for _, m := range hist {
		saves = resultSavings(saves, m, elideHead)
	}
	e, _, _ := elideBoundary(saves, 0, 0, 0, keepToolResults, elideBlock, minSaving)
	k := 0
	for i, m := range hist {
		if n := resultsIn(m); n > 0 && k+n > e {
			return i
		}
		k += resultsIn(m)
	}
	return len(hist)
}

// TestElideStablePrefixHolds holds get's promise: over a history that only grows, with results
// of every size, the first stable messages of a request are sent, unchanged, in every later
// one; and the boundary moves only when it saves minSaving.
func TestElideStablePrefixHolds(t *testing.T) {
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 2))
		var c elideCache
		var hist []providers.Message
		type sent struct {
			msgs   []providers.Message
			stable int
		}
		var reqs []sent
		moves := 0
		for i := range 200 {
			size := 1 + r.IntN(40) // under the head: never elided
			if r.IntN(3) == 0 {
				size = 100 + r.IntN(1500) // 1-15 KB
			}
			hist = append(hist, resultExchange(i, size, false)...)
			got, stable := c.get(hist[:len(hist):len(hist)], 0, keepToolResults, elideHead, elideBlock, elideMinSaving)
			if stable > len(got) {
				t.Fatalf("seed %d request %d: stable %d of %d messages", seed, i, stable, len(got))
			}
			// Checked against the request before, with stable never falling, the promise holds
			// for every earlier request.
			if n := len(reqs); n > 0 {
				prev := reqs[n-1]
				if stable < prev.stable || !reflect.DeepEqual(prev.msgs[:prev.stable], got[:prev.stable]) {
					t.Fatalf("seed %d request %d: stable %d after %d, or a message of the stable prefix changed", seed, i, stable, prev.stable)
				}
				if !reflect.DeepEqual(prev.msgs, got[:len(prev.msgs)]) {
					moves++
				}
			}
			reqs = append(reqs, sent{append([]providers.Message(nil), got...), stable})
		}
		// Each move elided at least elideMinSaving bytes: the moves are at most the savings over it.
		var saves []int
		for _, m := range hist {
			saves = resultSavings(saves, m, elideHead)
		}
		total := 0
		for _, s := range saves {
			total += s
		}
		if moves == 0 || moves > total/elideMinSaving {
			t.Fatalf("seed %d: the boundary moved %d times over %d bytes of savings (at most %d)", seed, moves, total, total/elideMinSaving)
		}
	}
}
