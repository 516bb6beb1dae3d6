package providers

import (
	"strings"

	"github.com/agentd-dev/agentd/config"
)

// PricesAsOf is the date of the built-in prices: the vendors' public list prices (Anthropic's
// and OpenAI's pricing pages) as they stood then, for standard (not batch, not priority)
// requests with a prompt under any long-context tier. They are not fetched or updated at run
// time; the user's models.<id>.price replaces a row.
const PricesAsOf = "2025-12-01"

func usd(in, out, cacheRead, cacheWrite float64) config.Price {
	return config.Price{Input: in, Output: out, CacheRead: &cacheRead, CacheWrite: &cacheWrite, Currency: "USD"}
}

// builtinPrices are per million tokens. Anthropic's cache write is its five-minute write.
// OpenAI bills no cache writes apart (they are input) and reports none. Gemini is left out on
// purpose: 2.5 Pro's price depends on the prompt's size (above 200k tokens it doubles), which
// one row cannot say, and its cache prices have changed more than once; a user who wants its
// cost sets models.<id>.price. Local models (ollama) have no price: their updates carry no cost.
var builtinPrices = map[string]config.Price{
	"claude-opus-4-5":   usd(5, 25, 0.50, 6.25),
	"claude-opus-4-1":   usd(15, 75, 1.50, 18.75),
	"claude-opus-4":     usd(15, 75, 1.50, 18.75),
	"claude-sonnet-4-5": usd(3, 15, 0.30, 3.75),
	"claude-sonnet-4":   usd(3, 15, 0.30, 3.75),
	"claude-haiku-4-5":  usd(1, 5, 0.10, 1.25),
	"claude-3-5-haiku":  usd(0.80, 4, 0.08, 1),
	"gpt-5":             usd(1.25, 10, 0.125, 1.25),
	"gpt-5.1":           usd(1.25, 10, 0.125, 1.25),
	"gpt-5-mini":        usd(0.25, 2, 0.025, 0.25),
	"gpt-5-nano":        usd(0.05, 0.40, 0.005, 0.05),
	"gpt-4.1":           usd(2, 8, 0.50, 2),
	"gpt-4.1-mini":      usd(0.40, 1.60, 0.10, 0.40),
	"gpt-4o":            usd(2.50, 10, 1.25, 2.50),
}

// PriceOf is the price of model: the user's models.<id>.price, else the built-in row for the
// model or for its dated snapshot ("claude-sonnet-4-5-20250929", "gpt-5-2025-08-07"); false
// when neither knows it, and then no cost is reported (never a made-up 0).
func PriceOf(set config.Settings, model string) (config.Price, bool) {
	if m, ok := set.Models[model]; ok && m.Price != nil {
		p := *m.Price
		if p.Currency == "" {
			p.Currency = "USD"
		}
		return p, true
	}
	if p, ok := builtinPrices[model]; ok {
		return p, true
	}
	if i := strings.LastIndexByte(model, '-'); i > 0 && dateSuffix(model[i+1:]) {
		p, ok := builtinPrices[model[:i]]
		return p, ok
	}
	// gpt-5-2025-08-07: the date has dashes of its own.
	if n := len(model); n > 11 && model[n-11] == '-' && dateSuffix(strings.ReplaceAll(model[n-10:], "-", "")) && model[n-6] == '-' && model[n-3] == '-' {
		p, ok := builtinPrices[model[:n-11]]
		return p, ok
	}
	return config.Price{}, false
}

// dateSuffix: eight digits, YYYYMMDD.
func dateSuffix(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// CostOf is what usage u cost at price p, in p's currency. Cache reads and writes not priced
// apart cost what input does.
func CostOf(p config.Price, u Usage) float64 {
	cr, cw := p.Input, p.Input
	if p.CacheRead != nil {
		cr = *p.CacheRead
	}
	if p.CacheWrite != nil {
		cw = *p.CacheWrite
	}
	return (float64(u.Input)*p.Input + float64(u.Output)*p.Output + float64(u.CacheRead)*cr + float64(u.CacheWrite)*cw) / 1e6
}
