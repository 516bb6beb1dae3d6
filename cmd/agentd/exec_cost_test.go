package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
)

// runPriced runs one replayed turn whose model call reports 1000 input and 100 output tokens,
// with price (a models.replay.price object, or "" for none) in the user's settings.
func runPriced(t *testing.T, price string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	execEnv(t)
	if price != "" {
		os.MkdirAll(config.ConfigDir(), 0o700)
		if err := os.WriteFile(config.UserConfigPath(), []byte(`{"models":{"replay":{"price":`+price+`}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	os.WriteFile(script, []byte(`{"responses":[{"text":"Done.","stopReason":"end_turn","usage":{"input":1000,"output":100}}]}`), 0o600)
	outF, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	in, _ := os.Open(os.DevNull)
	defer in.Close()
	var errb bytes.Buffer
	code = execMain(append(append([]string{"--replay", script, "--cwd", dir}, args...), "say done"), in, outF, &errb)
	b, _ := os.ReadFile(outF.Name())
	return code, string(b), errb.String()
}

// agentd exec ends with the session's cost when the model's price is known: 1000 input at 2
// and 100 output at 10 per million.
func TestExecPrintsTheCost(t *testing.T) {
	code, out, errs := runPriced(t, `{"input":2,"output":10,"currency":"EUR"}`)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.HasSuffix(errs, "agentd: tokens: 1000 in, 100 out\nagentd: cost: 0.003 EUR\n") {
		t.Errorf("the run does not end with its cost:\n%s", errs)
	}
	code, out, errs = runPriced(t, `{"input":2,"output":10}`, "--json")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"result":`) || !strings.Contains(last, `"cost":{"amount":0.003,"currency":"USD"}`) {
		t.Errorf("the JSON result line has no cost: %s", last)
	}
}

// Without a price no cost is printed, not a cost of 0.
func TestExecPrintsNoCostWithoutAPrice(t *testing.T) {
	code, out, errs := runPriced(t, "")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(errs, "cost") || !strings.Contains(errs, "agentd: tokens: 1000 in, 100 out") {
		t.Errorf("stderr:\n%s", errs)
	}
}
