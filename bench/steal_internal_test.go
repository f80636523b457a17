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
	} {
		got, ok := stolen(tc.a, tc.b)
		if ok != tc.ok || got != tc.want {
			t.Errorf("stolen(%+v, %+v) = %v, %v; want %v, %v", tc.a, tc.b, got, ok, tc.want, tc.ok)
		}
	}
}
