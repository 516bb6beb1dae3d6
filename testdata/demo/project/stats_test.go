package stats

import "testing"

func TestMean(t *testing.T) {
	if got := Mean([]float64{1, 2, 3}); got != 2 {
		t.Errorf("Mean(1, 2, 3) = %v, want 2", got)
	}
	if got := Mean(nil); got != 0 {
		t.Errorf("Mean(nil) = %v, want 0", got)
	}
}

func TestMax(t *testing.T) {
	if got := Max([]float64{3, 9, 4}); got != 9 {
		t.Errorf("Max(3, 9, 4) = %v, want 9", got)
	}
}
