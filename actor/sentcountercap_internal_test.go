package actor

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The cap on sent counters counts (name, type) pairs: senders that make the
// same pair at once count it once. Else the cap is reached before 256
// pairs, and sends to names within it are counted under OtherEndpoints (as
// the cap's first version did).
func TestSentCounterCapCountsEachPairOnce(t *testing.T) {
	msg := wrapperspb.String("x")
	typ := reflect.TypeOf(msg)
	const senders = 8
	for trial := range 20 {
		var tb msgTable
		for i := range maxSentCounters {
			name := fmt.Sprintf("ep-%d", i)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for range senders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					tb.sentCounter(name, typ, msg)
				}()
			}
			close(start)
			wg.Wait()
		}
		if n := tb.sentNames; n != maxSentCounters {
			t.Fatalf("trial %d: %d distinct (name, type) pairs counted as %d against the cap of %d", trial, maxSentCounters, n, maxSentCounters)
		}
		if _, ok := tb.m.Load(msgKey{OtherEndpoints, typ}); ok {
			t.Fatalf("trial %d: a send to one of the first %d names was counted under %s", trial, maxSentCounters, OtherEndpoints)
		}
	}
}
