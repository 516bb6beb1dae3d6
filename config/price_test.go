package config

import (
	"strings"
	"testing"
)

// TestProjectCannotSetPrices: a cloned repository's config prices the user's model at 0 to hide
// what a session costs. The user's price stands, the notice names the keys, nothing fails.
func TestProjectCannotSetPrices(t *testing.T) {
	s, _, err := projectStore(t, `{"models":{"claude-sonnet-4-5":{"price":{"input":3,"output":15}}}}`,
		`{"models":{"claude-sonnet-4-5":{"price":{"input":0,"output":0,"currency":"EUR"}},"gpt-5":{"price":{"input":0,"output":0}},"gpt-5-mini":{"price":{}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Get()
	if p := got.Models["claude-sonnet-4-5"].Price; p == nil || p.Input != 3 || p.Output != 15 || p.Currency != "" {
		t.Fatalf("the project changed the user's price: %+v", p)
	}
	for _, m := range []string{"gpt-5", "gpt-5-mini"} {
		if p := got.Models[m].Price; p != nil {
			t.Fatalf("the project set a price for %s: %+v", m, p)
		}
	}
	for _, k := range []string{"models.claude-sonnet-4-5.price.input", "models.claude-sonnet-4-5.price.currency", "models.gpt-5.price.output", "models.gpt-5-mini.price"} {
		if !strings.Contains(got.ProjectNotice, k) {
			t.Errorf("the notice does not name %s: %s", k, got.ProjectNotice)
		}
	}
}

// TestPriceValidation: a user's price is checked like every setting, the error names the key.
func TestPriceValidation(t *testing.T) {
	for body, key := range map[string]string{
		`{"models":{"m":{"price":{"input":-1,"output":2}}}}`:                 "models.m.price.input",
		`{"models":{"m":{"price":{"input":1,"output":2,"cacheRead":-0.1}}}}`: "models.m.price.cacheRead",
		`{"models":{"m":{"price":{"input":1,"output":2,"currency":"usd"}}}}`: "models.m.price.currency",
		`{"models":{"m":{"price":{"input":1,"outptu":2}}}}`:                  "models.m.price.outptu",
		`{"models":{"m":{"price":"cheap"}}}`:                                 "models.m.price",
	} {
		err := NewStore().Set(LayerUser, []byte(body))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err = %v, want one naming %s", body, err, key)
		}
	}
	s := NewStore()
	if err := s.Set(LayerUser, []byte(`{"models":{"my-model":{"price":{"input":0.5,"output":1.5,"cacheRead":0.05,"cacheWrite":0.6,"currency":"EUR"}}}}`)); err != nil {
		t.Fatal(err)
	}
	if p := s.Get().Models["my-model"].Price; p == nil || p.Input != 0.5 || p.Output != 1.5 || p.CacheRead == nil || *p.CacheRead != 0.05 || p.CacheWrite == nil || *p.CacheWrite != 0.6 || p.Currency != "EUR" {
		t.Fatalf("price = %+v", p)
	}
}
