package recent_test

import (
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster/internal/recent"
)

// A Map keeps the last Max keys put, a key put again keeping its place,
// and forgets the oldest first.
func TestMapKeepsTheLastKeys(t *testing.T) {
	r := recent.Map[int, string]{Max: 3}
	for i := range 10 {
		r.Put(i, "v")
		r.Put(i, "again") // its place is kept
	}
	if r.Len() != 3 {
		t.Fatalf("%d keys kept, want 3", r.Len())
	}
	for i := range 10 {
		v, ok := r.Get(i)
		if want := i >= 7; ok != want || ok && v != "again" {
			t.Errorf("Get(%d) = %q, %v; want kept %v", i, v, ok, want)
		}
	}
}
