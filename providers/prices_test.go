package providers

import (
	"math"
	"testing"

	"github.com/agentd-dev/agentd/config"
)

func TestPriceOf(t *testing.T) {
	set := config.Defaults()
	for _, tc := range []struct {
		model string
		in    float64
		ok    bool
	}{
		{"claude-sonnet-4-5", 3, true},
		{"claude-sonnet-4-5-20250929", 3, true},
		{"gpt-5", 1.25, true},
		{"gpt-5-2025-08-07", 1.25, true},
		{"gpt-5-mini", 0.25, true},
		{"claude-opus-4-1", 15, true},
		{"claude-opus-4-2", 0, false}, // not a date: never the price of claude-opus-4
		{"qwen2.5-coder", 0, false},
		{"gemini-2.5-pro", 0, false},
		{"", 0, false},
		{"-20250101", 0, false},
	} {
		p, ok := PriceOf(set, tc.model)
		if ok != tc.ok || p.Input != tc.in || (ok && p.Currency != "USD") {
			t.Errorf("PriceOf(%q) = %+v, %v; want input %v, %v", tc.model, p, ok, tc.in, tc.ok)
		}
	}
	// Every default provider's model that is not local has a price (or is left out on purpose).
	for id, ps := range set.Providers {
		if _, ok := PriceOf(set, ps.Model); !ok && id != "ollama" && id != "gemini" {
			t.Errorf("the default model of %s (%s) has no built-in price", id, ps.Model)
		}
	}
	// The user's price wins, in its currency; a price without one is USD.
	set.Models = map[string]config.ModelSettings{"gpt-5": {Price: &config.Price{Input: 1, Output: 2, Currency: "EUR"}}, "local": {Price: &config.Price{}}}
	if p, _ := PriceOf(set, "gpt-5"); p.Input != 1 || p.Currency != "EUR" {
		t.Errorf("user price = %+v", p)
	}
	if p, ok := PriceOf(set, "local"); !ok || p.Currency != "USD" {
		t.Errorf("user's free model = %+v %v", p, ok)
	}
}

func TestCostOfPricesCacheApart(t *testing.T) {
	p, _ := PriceOf(config.Defaults(), "claude-sonnet-4-5")
	u := Usage{Input: 1_000_000, Output: 100_000, CacheRead: 2_000_000, CacheWrite: 400_000}
	// 3 + 1.5 + 0.6 + 1.5
	if got := CostOf(p, u); math.Abs(got-6.6) > 1e-9 {
		t.Errorf("cost = %v, want 6.6", got)
	}
	// A price without cache prices bills cache tokens as input.
	plain := config.Price{Input: 2, Output: 4}
	if got := CostOf(plain, Usage{CacheRead: 1_000_000, CacheWrite: 500_000}); math.Abs(got-3) > 1e-9 {
		t.Errorf("cost = %v, want 3", got)
	}
	zero := 0.0
	if got := CostOf(config.Price{Input: 2, CacheRead: &zero}, Usage{CacheRead: 1_000_000}); got != 0 {
		t.Errorf("free cache reads cost %v", got)
	}
}
