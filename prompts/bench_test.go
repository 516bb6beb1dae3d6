package prompts

import "testing"

// BenchmarkRenderTurn renders what one request needs: the system prompt and the turn's context,
// with every section open (the budget is 50 µs).
func BenchmarkRenderTurn(b *testing.B) {
	s := Default()
	run := Run(runNames())
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		_ = s.Render("layout.system", run)
		_ = s.Render("layout.context", run)
	}
}

// BenchmarkLoadBuiltin is what the first turn pays to parse, check and activate the embedded set
// (the budget is 1 ms; start-up itself does not load it).
func BenchmarkLoadBuiltin(b *testing.B) {
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := Load(Builtin(), nil); err != nil {
			b.Fatal(err)
		}
	}
}
