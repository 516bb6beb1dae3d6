package tools

import "testing"

// ScaleRoot is the generated 100k-file project of scale_bench_test.go, for the benchmarks of
// package tools_test (the semantic index's, which cannot live here: tools/semindex imports
// tools).
func ScaleRoot(b *testing.B) string { return getScale(b).root }

// PeakRSS is peakRSS for those benchmarks.
var PeakRSS = peakRSS
