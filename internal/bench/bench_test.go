package bench

import "testing"

func TestSummarize(t *testing.T) {
	s := summarize("x", "s", []float64{5, 1, 3, 9})
	if s.Median != 4 || s.Min != 1 || s.Max != 9 || s.Runs != 4 {
		t.Errorf("even: %+v", s)
	}
	if s := summarize("x", "s", []float64{7, 2, 3}); s.Median != 3 {
		t.Errorf("odd: %+v", s)
	}
}

func TestParseMiB(t *testing.T) {
	for in, want := range map[string]float64{"812.5MiB": 812.5, "1.5GiB": 1536, "512KiB": 0.5, "0B": 0, "junk": 0} {
		if got := parseMiB(in); got != want {
			t.Errorf("parseMiB(%q) = %v, want %v", in, got, want)
		}
	}
}
