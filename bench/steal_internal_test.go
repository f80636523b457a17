package bench

import "testing"

func TestStolen(t *testing.T) {
	for _, tc := range []struct {
		a, b cpuTimes
		want float64
		ok   bool
	}{
		{cpuTimes{steal: 10, total: 1000}, cpuTimes{steal: 30, total: 1100}, 0.2, true},
		{cpuTimes{steal: 10, total: 1000}, cpuTimes{steal: 10, total: 1100}, 0, true},
		{cpuTimes{steal: 10, total: 1000}, cpuTimes{steal: 10, total: 1000}, 0, false},
		// Counters read at slightly different moments: clamped to 0..1.
		{cpuTimes{steal: 10, total: 1000}, cpuTimes{steal: 40, total: 1010}, 1, true},
		{cpuTimes{steal: 10, total: 1000}, cpuTimes{steal: 5, total: 1010}, 0, true},
	} {
		got, ok := stolen(tc.a, tc.b)
		if ok != tc.ok || got != tc.want {
			t.Errorf("stolen(%+v, %+v) = %v, %v; want %v, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}
