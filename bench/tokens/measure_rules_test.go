package tokens

import (
	"fmt"
	"strings"
	"testing"
)

// The measurement's rules on made-up requests, so that a figure of the task means what the
// docs say it does.
func TestAnthropicCachedRules(t *testing.T) {
	big := func(s string) string { return strings.Repeat(s, 2048) } // 2,048 bytes: 512 tokens
	tool, sys := item{text: big("t") + big("t") + big("t"), brk: true}, item{text: big("s"), brk: true}
	msg := func(i int, brk bool) item { return item{text: big(fmt.Sprint(i % 10)), brk: brk} }
	prev := []item{tool, sys, msg(1, false), msg(2, true)}
	head := tokensOf(len(tool.text) + len(sys.text))
	whole := tokensOf(len(join(prev)))

	grown := append(append([]item(nil), prev[:3]...), msg(2, false), msg(3, false), msg(4, true))
	if got := anthropicCached([][]item{prev}, grown); got != whole {
		t.Errorf("appended to: cached %d, want the previous request's %d", got, whole)
	}
	changed := []item{tool, sys, msg(9, false), msg(2, false), msg(3, true)}
	if got := anthropicCached([][]item{prev}, changed); got != head {
		t.Errorf("first message changed: cached %d, want the tools and system, %d", got, head)
	}
	// The previous end lies more than 20 blocks before the next breakpoint: not found.
	far := append([]item(nil), prev[:3]...)
	far = append(far, msg(2, false))
	for i := range 21 {
		far = append(far, msg(i, i == 20))
	}
	if got := anthropicCached([][]item{prev}, far); got != head {
		t.Errorf("21 blocks on: cached %d, want %d", got, head)
	}
	// ... unless a breakpoint of the request's own marks it (Request.Stable's).
	far[3].brk = true
	if got := anthropicCached([][]item{prev}, far); got != whole {
		t.Errorf("with a breakpoint there: cached %d, want %d", got, whole)
	}
	// An earlier request's entry counts, not only the last one's.
	if got := anthropicCached([][]item{prev, changed}, grown); got != whole {
		t.Errorf("two requests back: cached %d, want %d", got, whole)
	}
	// Below Sonnet's minimum nothing is cached.
	small := []item{{text: "tiny", brk: true}, {text: "x"}}
	if got := anthropicCached([][]item{small}, small); got != 0 {
		t.Errorf("a 1-token prefix: cached %d, want 0", got)
	}
}

func TestAnthropicItemsStripOnlyTheMarker(t *testing.T) {
	body := `{"model":"m","tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}}],"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"say \"cache_control\":{}","cache_control":{"type":"ephemeral"}}]}]}`
	items, err := anthropicItems([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []item{
		{text: `tool:{"name":"a","input_schema":{}}`, brk: true},
		{text: `system:{"type":"text","text":"S"}`, brk: true},
		{text: `user:{"type":"text","text":"say \"cache_control\":{}"}`, brk: true},
	}
	if fmt.Sprint(items) != fmt.Sprint(want) {
		t.Errorf("items\n got %v\nwant %v", items, want)
	}
}

func TestPrefixCachedSteps(t *testing.T) {
	a := strings.Repeat("a", 4*1100) + "x"
	b := strings.Repeat("a", 4*1100) + "y"
	if got := prefixCached([]string{a}, b, 1024); got != 1024 {
		t.Errorf("1,100 shared tokens: cached %d, want 1,024 (steps of 128)", got)
	}
	if got := prefixCached([]string{a[:4000]}, b, 1024); got != 0 {
		t.Errorf("1,000 shared tokens: cached %d, want 0 (below the minimum)", got)
	}
	if got := prefixCached(nil, b, 1024); got != 0 {
		t.Errorf("no earlier request: cached %d", got)
	}
}
