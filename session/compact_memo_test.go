package session

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentd-dev/agentd/providers"
)

// The memo changes nothing the model is sent: over a growing history, each request's messages
// with the memo equal those without it, an older result's elided text is the very string of the
// request before (not cut again), and a text that differs at the same length is cut anew.
func TestElideMemoSameAsWithout(t *testing.T) {
	var memo elideMemo
	var hist []providers.Message
	var prev []providers.Message
	for i := range 40 {
		id := fmt.Sprintf("c%d", i)
		hist = append(hist,
			providers.Message{Role: providers.RoleAssistant, Parts: []providers.Part{{Type: providers.PartToolCall, ToolCallID: id, ToolName: "read_file", Args: []byte(`{}`)}}},
			providers.Message{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartToolResult, ToolCallID: id, ToolName: "read_file", Text: strings.Repeat(fmt.Sprintf("result %d ", i), 200)}}})
		with := elideToolResultsMemo(hist, keepToolResults, elideHead, elideBlock, &memo)
		without := elideToolResults(hist, keepToolResults, elideHead, elideBlock)
		if !reflect.DeepEqual(with, without) {
			t.Fatalf("request %d: the memo changed the messages", i)
		}
		for j := range prev {
			a, b := prev[j].Parts[0].Text, with[j].Parts[0].Text
			if prev[j].Parts[0].Type == providers.PartToolResult && len(a) < len(hist[j].Parts[0].Text) && a == b && unsafe.StringData(a) != unsafe.StringData(b) {
				t.Fatalf("request %d: message %d was cut again", i, j)
			}
		}
		prev = with
	}
	if !strings.Contains(prev[1].Parts[0].Text, "more bytes of this older read_file result were elided") {
		t.Fatalf("the oldest result was not elided: %.200s", prev[1].Parts[0].Text)
	}
	// The same length, other bytes, a fresh string: cut from its own text.
	other := strings.Repeat("x", len(hist[1].Parts[0].Text))
	memo.begin()
	got := memo.elide(other, "read_file", elideHead)
	memo.end()
	if !strings.HasPrefix(got, "xxxx") {
		t.Fatalf("got %.50s", got)
	}
	// A request over a shorter history (after a compaction) leaves only its own results in the
	// memo, so it holds none the history dropped.
	elideToolResultsMemo(hist[len(hist)-20:], keepToolResults, elideHead, elideBlock, &memo)
	if n := len(memo.m); n == 0 || n > 10 {
		t.Fatalf("the memo holds %d entries after a request with at most 10 results", n)
	}
}
