package tokens

import (
	"fmt"
	"os"
	"strings"
	"testing"
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

// table renders a dialect's per-step figures.
func table(name string, fs []figure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nstep   bytes  tokens  cached  prefix-of-previous  implicit\n", name)
	for _, f := range fs {
		fmt.Fprintf(&b, "%4d %7d %7d %7d %7d %7d\n", f.step, f.bytes, f.tokens, f.cached, f.prefix, f.implicit)
	}
	s := summarize(fs)
	fmt.Fprintf(&b, "total %d bytes (%d/step), %d tokens, cached %.1f%%, prefix of previous %.1f%%, implicit %.1f%%\n", s.bytes, s.bytes/s.steps, s.tokens, 100*s.share(), 100*s.prefixShare(), 100*s.implicitShare())
	return b.String()
}

func TestTokenEconomy(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			reqs := runTask(t, d)
			fs, err := d.measure(reqs)
			if err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + table(d.name, fs))
		})
	}
}
