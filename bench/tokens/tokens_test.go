package tokens

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// TestMain keeps the managers' state key out of the user's config directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentd-tokens-config-")
	if err == nil {
		os.Setenv("XDG_CONFIG_HOME", dir)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// inputCost is what the task's input tokens cost at the built-in price of d's model, with the
// cache as measured and without any ("" when agentd knows no price: Gemini's). Anthropic writes
// to its cache every token it did not read from it (the last breakpoint ends the request) at
// the cache-write price; OpenAI bills uncached tokens as input.
func inputCost(d *dialect, fs []figure) (cached, uncached string) {
	model := map[string]string{"anthropic": "claude-sonnet-4-5", "openai": "gpt-5"}[d.name]
	price, ok := providers.PriceOf(config.Defaults(), model)
	if !ok {
		return "", ""
	}
	var with, without float64
	for _, f := range fs {
		u := providers.Usage{Input: f.tokens - f.cached, CacheRead: f.cached}
		if d.name == "anthropic" {
			u = providers.Usage{CacheWrite: f.tokens - f.cached, CacheRead: f.cached}
		}
		with += providers.CostOf(price, u)
		without += providers.CostOf(price, providers.Usage{Input: f.tokens})
	}
	return fmt.Sprintf("$%.3f", with), fmt.Sprintf("$%.3f", without)
}

// table renders a dialect's per-step figures.
func table(d *dialect, fs []figure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nstep   bytes  tokens  cached  prefix  implicit\n", d.name)
	for _, f := range fs {
		fmt.Fprintf(&b, "%4d %7d %7d %7d %7d %7d\n", f.step, f.bytes, f.tokens, f.cached, f.prefix, f.implicit)
	}
	s := summarize(fs)
	fmt.Fprintf(&b, "total %d bytes (%d/step), %d tokens, cached %.1f%%, prefix of the previous request %.1f%%", s.bytes, s.bytes/s.steps, s.tokens, 100*s.share(), 100*s.prefixShare())
	if d.name == "gemini" {
		fmt.Fprintf(&b, ", implicit (a prefix cache over the whole request) %.1f%%", 100*s.implicitShare())
	}
	if with, without := inputCost(d, fs); with != "" {
		fmt.Fprintf(&b, ", input cost %s (%s without a cache)", with, without)
	}
	return b.String() + "\n"
}

// TestTokenEconomy runs the task through each dialect and holds issue 34's goal: at least 90 %
// of the input tokens served by the prompt cache. Gemini's explicit cache holds the system
// instruction and the tools only, so its share falls as a conversation grows (what holds it is
// in docs/benchmarks.md); for Gemini the goal is held on the whole request's prefix, which its
// implicit cache serves, and the explicit cache must be named by every request after the first.
func TestTokenEconomy(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			fs, err := d.measure(runTask(t, d, rename))
			if err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + table(d, fs))
			s := summarize(fs)
			share := s.share()
			if d.name == "gemini" {
				share = s.implicitShare()
				for _, f := range fs[1:] {
					if f.cached == 0 {
						t.Errorf("step %d does not name the cachedContents", f.step)
					}
				}
			}
			if share < 0.90 {
				t.Errorf("%.1f%% of the input tokens cached, want at least 90%%", 100*share)
			}
		})
	}
}

// BenchmarkTokenEconomy reports the task's figures per dialect; the anchor beside the cached
// share is prefix-%, what a cache that keeps every request's whole prefix would serve.
func BenchmarkTokenEconomy(b *testing.B) {
	for _, tk := range []task{rename, reads} {
		for _, d := range dialects {
			b.Run(tk.name+"/"+d.name, func(b *testing.B) { benchmarkTask(b, d, tk) })
		}
	}
}

func benchmarkTask(b *testing.B, d *dialect, tk task) {
	for b.Loop() {
		fs, err := d.measure(runTask(b, d, tk))
		if err != nil {
			b.Fatal(err)
		}
		s := summarize(fs)
		b.ReportMetric(100*s.share(), "cached-%")
		b.ReportMetric(100*s.prefixShare(), "prefix-%")
		if d.name == "gemini" {
			b.ReportMetric(100*s.implicitShare(), "implicit-%")
		}
		b.ReportMetric(float64(s.bytes)/float64(s.steps), "bytes/step")
		b.ReportMetric(float64(s.tokens), "tokens")
	}
}

// TestReadsTask logs the figures of the reads task, where the elision boundary moves every third
// step: the case Request.Stable's breakpoint is for. It holds no goal (every move re-sends what
// follows it); it fails only when the task does not run.
func TestReadsTask(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			fs, err := d.measure(runTask(t, d, reads))
			if err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + table(d, fs))
		})
	}
}
