package acceptance_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

// costTurn is a fake model answer whose usage chunk reports u (replay's usage shape).
func costTurn(text, u string) fakemodel.Turn {
	return fakemodel.Turn{Text: text, Usage: json.RawMessage(u)}
}

// TestCostBearingTurnThroughTheBinary: an OpenAI-compatible server reports each call's tokens,
// cache reads among them; with the model's built-in price (gpt-5-mini: 0.25 input, 0.025 cache
// read, 2 output per million, USD) every usage_update carries the session's cumulative cost,
// the cache reads priced at their own rate.
func TestCostBearingTurnThroughTheBinary(t *testing.T) {
	t.Parallel()
	const usage = `{"input":1000,"output":200,"cacheRead":3000}`
	_, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{costTurn("one", usage), costTurn("two", usage)}, Routes: titleRoute})
	settings := map[string]any{
		"provider":  "fm",
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": url, "model": "gpt-5-mini"}},
	}
	b, _ := json.Marshal(settings)
	e := start(t, fakeeditor.Full(), b)
	sid := e.newSession()
	e.prompt(sid, "first")
	e.prompt(sid, "second")
	const call = (1000*0.25 + 3000*0.025 + 200*2) / 1e6 // 0.000725; the cache read as input: 0.00145
	// The turns' usage updates, and between them the title's (its request counts in the cost
	// too, after the first turn answered).
	uu := kinds(e.rawUpdates(sid), "usage_update")
	if len(uu) != 3 {
		t.Fatalf("usage updates %v, want three (turn, title, turn)", uu)
	}
	var amounts []float64
	for i, u := range uu {
		cost, _ := u["cost"].(map[string]any)
		amount, _ := cost["amount"].(float64)
		if cost == nil || cost["currency"] != "USD" {
			t.Fatalf("usage_update %d = %v, want a cost in USD", i, u)
		}
		amounts = append(amounts, amount)
	}
	if math.Abs(amounts[0]-call) > 1e-12 || !(amounts[1] > amounts[0]) || math.Abs(amounts[2]-amounts[1]-call) > 1e-12 {
		t.Errorf("cumulative costs %v, want %v, then more (the title), then one more call (%v)", amounts, call, call)
	}
}

// TestUnpricedModelSendsNoCost: a model no price is known for (the fake model's own id) gets
// usage updates without a cost field, never a cost of 0.
func TestUnpricedModelSendsNoCost(t *testing.T) {
	t.Parallel()
	_, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{costTurn("one", `{"input":1000,"output":200}`)}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	sid := e.newSession()
	e.prompt(sid, "first")
	uu := kinds(e.rawUpdates(sid), "usage_update")
	if len(uu) != 1 {
		t.Fatalf("usage updates %v, want one", uu)
	}
	if _, ok := uu[0]["cost"]; ok {
		t.Errorf("usage_update of an unpriced model = %v, want no cost", uu[0])
	}
}

// TestUserPriceThroughTheBinary: the user's models.<id>.price, in its currency, prices cache
// writes apart from input.
func TestUserPriceThroughTheBinary(t *testing.T) {
	t.Parallel()
	_, url := fakeModel(t, fakemodel.Script{Turns: []fakemodel.Turn{costTurn("one", `{"input":1000,"output":100,"cacheWrite":2000}`)}, Routes: titleRoute})
	e := start(t, fakeeditor.Full(), openaiSettings(url, map[string]any{
		"models": map[string]any{fakemodel.ModelID: map[string]any{"price": map[string]any{"input": 1, "output": 10, "cacheWrite": 5, "currency": "EUR"}}},
	}))
	sid := e.newSession()
	e.prompt(sid, "first")
	uu := kinds(e.rawUpdates(sid), "usage_update")
	// OpenAI's prompt_tokens would count cache writes among the input; the fake reports them
	// apart, as parseUsage reads them: 1000 input at 1, 2000 written at 5, 100 out at 10.
	const want = (1000*1 + 2000*5 + 100*10) / 1e6
	// The session's title is asked for after the first turn answers, so its usage update may or
	// may not have arrived yet: the turn's own is the first, and a second can only add to it.
	if len(uu) == 0 || len(uu) > 2 {
		t.Fatalf("usage updates %v, want the turn's (and maybe the title's after it)", uu)
	}
	if len(uu) == 2 {
		first, _ := uu[0]["cost"].(map[string]any)
		second, _ := uu[1]["cost"].(map[string]any)
		a, _ := first["amount"].(float64)
		b, _ := second["amount"].(float64)
		if !(b > a) {
			t.Errorf("usage updates %v: the title's cost %v should add to the turn's %v", uu, b, a)
		}
	}
	cost, _ := uu[0]["cost"].(map[string]any)
	if amount, _ := cost["amount"].(float64); cost["currency"] != "EUR" || math.Abs(amount-want) > 1e-12 {
		t.Errorf("usage_update = %v, want cost {amount %v, currency EUR}", uu[0], want)
	}
}
