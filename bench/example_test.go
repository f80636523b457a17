package bench_test

import (
	"context"
	"fmt"

	"github.com/sparkrpc/sparkrpc/bench"
)

// Run measures a scenario next to its baselines and checks every message.
func ExampleRun() {
	cfg := bench.DefaultConfig()
	cfg.Scenarios = []string{bench.ScenarioLocalSend}
	cfg.Senders = 1 // only the one-sender variant
	cfg.Count, cfg.WarmupCount = 1000, 100
	rep, err := bench.Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	r := rep.Results[0]
	fmt.Printf("%s %s: %s %s\n", r.Scenario, r.Params, bench.ImplSparkrpc, r.Figures.Verified)
	for _, b := range r.Baselines {
		_, hasRatio := r.Ratio(b.Name, "msgs_per_sec")
		fmt.Printf("  %s %s, ratio measured: %v\n", b.Name, b.Figures.Verified, hasRatio)
	}
	fmt.Println("target:", r.Targets[0].Name)
	// Output:
	// local-send 16B: sparkrpc ok 1000 in order
	//   protoactor ok 1000 in order, ratio measured: true
	// target: ≥ 0.95× protoactor Send msgs/s
}

func ExampleScenarioNames() {
	for _, name := range bench.ScenarioNames() {
		fmt.Println(name)
	}
	// Output:
	// local-send
	// local-ask
	// loop
	// many-endpoints
	// remote-send
	// remote-ask
	// remote-fan-in
	// remote-ask-under-flood
	// executor-registration
	// empty-tasks
	// empty-tasks-eventlog
	// executor-startup
}
