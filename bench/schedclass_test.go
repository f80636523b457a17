package bench_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/bench"
)

// A run outside the default scheduling class says so in its table, and a
// comparison of runs in different classes warns that their ratios differ.
func TestSchedulingClassInTextOutput(t *testing.T) {
	plain := &bench.Report{Started: time.Now()}
	var buf bytes.Buffer
	if err := plain.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "Scheduling class") {
		t.Fatalf("a run in the default class names its class:\n%s", buf.String())
	}
	rt := &bench.Report{Started: time.Now(), Machine: bench.Machine{Scheduling: "SCHED_FIFO priority 10"}}
	buf.Reset()
	if err := rt.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if want := "Scheduling class: SCHED_FIFO priority 10, not the default"; !strings.Contains(buf.String(), want) {
		t.Fatalf("table lacks %q:\n%s", want, buf.String())
	}
	buf.Reset()
	if err := rt.WriteComparison(&buf, plain); err != nil {
		t.Fatal(err)
	}
	if want := "note: scheduling class default in the earlier run, SCHED_FIFO priority 10 in this one"; !strings.Contains(buf.String(), want) {
		t.Fatalf("comparison lacks %q:\n%s", want, buf.String())
	}
	buf.Reset()
	if err := plain.WriteComparison(&buf, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "scheduling class") {
		t.Fatalf("a comparison of runs in one class warns of classes:\n%s", buf.String())
	}
}
