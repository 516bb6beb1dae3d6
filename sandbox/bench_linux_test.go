package sandbox

import (
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"
)

// BenchmarkProgramStart starts /bin/true without and with the sandbox, alternating, and
// reports each one's median start-to-exit time and the median added by the sandbox: the helper's
// exec, the namespaces, the mounts, the walk for the deny list and the Landlock and seccomp setup.
// go test ./sandbox -run '^$' -bench ProgramStart -benchtime 200x
// The helper is the test binary; SANDBOX_BENCH_HELPER=PATH makes it a built agentd instead.
func BenchmarkProgramStart(b *testing.B) {
	if st := Probe(); !st.Available {
		b.Skipf("no sandbox here: %s", st.Reason)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	if h := os.Getenv("SANDBOX_BENCH_HELPER"); h != "" {
		exe = h
	}
	root := b.TempDir()
	os.MkdirAll(root+"/.git/hooks", 0o755)
	home, _ := os.UserHomeDir()
	p := Policy{Roots: []string{root}, TempDir: b.TempDir(), Deny: DefaultDeny(home, home+"/.config/agentd", home+"/.local/state/agentd")}
	run := func(boxed bool) time.Duration {
		cmd := exec.Command("/bin/true")
		cmd.Dir = root
		if boxed {
			release, err := Wrap(cmd, exe, p)
			if err != nil {
				b.Fatal(err)
			}
			defer release()
		}
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		return time.Since(start)
	}
	var plain, boxed []time.Duration
	b.ResetTimer()
	for b.Loop() {
		plain = append(plain, run(false))
		boxed = append(boxed, run(true))
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	mp, mb := med(plain), med(boxed)
	b.ReportMetric(mp, "plain-median-ms")
	b.ReportMetric(mb, "sandboxed-median-ms")
	b.ReportMetric(mb-mp, "added-median-ms")
}
