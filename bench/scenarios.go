package bench

import "sync"

// Scenario names.
const (
	ScenarioLocalSend            = "local-send"
	ScenarioLocalAsk             = "local-ask"
	ScenarioLoop                 = "loop"
	ScenarioManyEndpoints        = "many-endpoints"
	ScenarioRemoteSend           = "remote-send"
	ScenarioRemoteAsk            = "remote-ask"
	ScenarioRemoteFanIn          = "remote-fan-in"
	ScenarioRemoteAskUnderFlood  = "remote-ask-under-flood"
	ScenarioExecutorRegistration = "executor-registration"
	ScenarioEmptyTasks           = "empty-tasks"
	ScenarioEmptyTasksEventLog   = "empty-tasks-eventlog"
)

// localPayload is the payload of the local scenarios: a small message.
const localPayload = 16

var (
	registryOnce sync.Once
	scenarios    []*scenario
)

// registry returns the scenarios, built once.
func registry() []*scenario {
	registryOnce.Do(func() { scenarios = buildRegistry() })
	return scenarios
}

// buildRegistry lists the scenarios in the order they run and are listed.
func buildRegistry() []*scenario {
	return []*scenario{
		localSendScenario(),
		localAskScenario(),
		loopScenario(),
		manyEndpointsScenario(),
		remoteSendScenario(),
		remoteAskScenario(),
		remoteFanInScenario(),
		remoteAskUnderFloodScenario(),
		executorRegistrationScenario(),
		emptyTasksScenario(),
		emptyTasksEventLogScenario(),
		startupScenario(),
	}
}

func localSendScenario() *scenario {
	return &scenario{
		name:        ScenarioLocalSend,
		description: "one-way sends to 1 endpoint in the same env: 1 sender, and fan-in from N senders",
		variants: func(c *Config) []Params {
			ps := []Params{{Payload: localPayload, Senders: 1, Endpoints: 1}}
			if c.Senders > 1 {
				ps = append(ps, Params{Payload: localPayload, Senders: c.Senders, Endpoints: 1})
			}
			return ps
		},
		sparkrpc:  impl{name: ImplSparkrpc, run: sparkrpcOneway},
		baselines: []impl{{name: ImplProtoactor, run: protoactorOneway}},
		targets: func(_ *Config, p Params) []targetSpec {
			if p.Senders != 1 {
				return nil
			}
			return []targetSpec{{name: "≥ 0.95× protoactor Send msgs/s", baseline: ImplProtoactor, metric: "msgs_per_sec", atLeast: true, threshold: 0.95}}
		},
	}
}

func localAskScenario() *scenario {
	return &scenario{
		name:        ScenarioLocalAsk,
		description: "asks to 1 endpoint in the same env: sequential (1 in flight) and K in flight",
		variants: func(c *Config) []Params {
			ps := []Params{{Payload: localPayload, InFlight: 1}}
			if c.InFlight > 1 {
				ps = append(ps, Params{Payload: localPayload, InFlight: c.InFlight})
			}
			return ps
		},
		sparkrpc:  impl{name: ImplSparkrpc, run: sparkrpcAsk},
		baselines: []impl{{name: ImplProtoactor, run: protoactorAsk}},
		targets: func(_ *Config, p Params) []targetSpec {
			if p.InFlight != 1 {
				return nil
			}
			return []targetSpec{{name: "≥ 1.0× protoactor RequestFuture msgs/s", baseline: ImplProtoactor, metric: "msgs_per_sec", atLeast: true, threshold: 1.0}}
		},
	}
}

func loopScenario() *scenario {
	return &scenario{
		name:        ScenarioLoop,
		description: "one-way sends from L senders to L endpoints (one each), on the shared loop and on dedicated loops",
		variants: func(c *Config) []Params {
			return []Params{
				{Payload: localPayload, Senders: c.LoopEndpoints, Endpoints: c.LoopEndpoints, Loop: "shared"},
				{Payload: localPayload, Senders: c.LoopEndpoints, Endpoints: c.LoopEndpoints, Loop: "dedicated"},
			}
		},
		sparkrpc:  impl{name: ImplSparkrpc, run: sparkrpcOneway},
		baselines: []impl{{name: ImplProtoactor, run: protoactorOneway}},
	}
}

func manyEndpointsScenario() *scenario {
	return &scenario{
		name:        ScenarioManyEndpoints,
		description: "many endpoints in one env, in ping-pong pairs, all pairs at once",
		variants: func(c *Config) []Params {
			return []Params{{Payload: localPayload, Endpoints: c.Endpoints - c.Endpoints%2}}
		},
		sparkrpc:  impl{name: ImplSparkrpc, run: sparkrpcPingPong},
		baselines: []impl{{name: ImplProtoactor, run: protoactorPingPong}},
	}
}

func remoteSendScenario() *scenario {
	return &scenario{
		name:        ScenarioRemoteSend,
		description: "one-way sends from one env to an endpoint of another over loopback TCP, per payload size",
		variants: func(c *Config) []Params {
			var ps []Params
			for _, size := range c.Payloads {
				ps = append(ps, Params{Payload: size, Senders: 1, Endpoints: 1})
			}
			return ps
		},
		sparkrpc: impl{name: ImplSparkrpc, run: sparkrpcRemoteOneway},
		tls:      true,
		baselines: []impl{
			{name: ImplProtoactorRemote, run: protoactorRemoteOneway, unavailable: raceUnavailable},
			{name: ImplTCP, run: tcpOneway},
			{name: ImplTCPDelivered, run: tcpDeliveredOneway},
			{name: ImplSparkrpcBorrowed, run: sparkrpcRemoteOnewayBorrowed},
		},
		// The transport costs nothing past the endpoint model's floor at
		// 16 B and 1 KiB, and a borrowed 64 KiB message is not copied.
		targets: func(_ *Config, p Params) []targetSpec {
			floor := targetSpec{name: "≥ 1.0× tcp-delivered msgs/s (the endpoint model's floor)", baseline: ImplTCPDelivered,
				metric: "msgs_per_sec", atLeast: true, threshold: 1.0}
			protoactor := targetSpec{name: "≥ 2.5× protoactor-remote msgs/s", baseline: ImplProtoactorRemote,
				metric: "msgs_per_sec", atLeast: true, threshold: 2.5}
			switch p.Payload {
			case 16:
				return []targetSpec{floor, protoactor, {name: "≤ 1.5 allocations a message (the harness's own not counted)",
					metric: metricTransportAllocs, atLeast: false, threshold: 1.5}}
			case 1 << 10:
				return []targetSpec{floor, protoactor}
			case 64 << 10:
				return []targetSpec{{name: "sparkrpc-borrowed ≥ 0.85× raw TCP msgs/s", subject: ImplSparkrpcBorrowed,
					baseline: ImplTCP, metric: "msgs_per_sec", atLeast: true, threshold: 0.85}}
			}
			return nil
		},
	}
}

func remoteAskScenario() *scenario {
	return &scenario{
		name:        ScenarioRemoteAsk,
		description: "asks from one env to an endpoint of another over loopback TCP, per payload size, 1 and K in flight",
		variants: func(c *Config) []Params {
			var ps []Params
			for _, size := range c.Payloads {
				ps = append(ps, Params{Payload: size, InFlight: 1})
				if c.InFlight > 1 {
					ps = append(ps, Params{Payload: size, InFlight: c.InFlight})
				}
			}
			return ps
		},
		sparkrpc: impl{name: ImplSparkrpc, run: sparkrpcRemoteAsk},
		tls:      true,
		baselines: []impl{
			{name: ImplProtoactorRemote, run: protoactorRemoteAsk, unavailable: raceUnavailable},
			{name: ImplTCP, run: tcpAsk},
			{name: ImplTCPDelivered, run: tcpDeliveredAsk},
		},
		targets: func(_ *Config, p Params) []targetSpec {
			switch {
			case p.Payload == 16 && p.InFlight == 1:
				return []targetSpec{{name: "p50 latency ≤ 1.2× raw TCP", baseline: ImplTCP, metric: "latency_p50", atLeast: false, threshold: 1.2}}
			case p.Payload == 16 && p.InFlight == 64:
				return []targetSpec{{name: "≥ 0.95× raw TCP msgs/s", baseline: ImplTCP, metric: "msgs_per_sec", atLeast: true, threshold: 0.95}}
			}
			return nil
		},
	}
}

func remoteFanInScenario() *scenario {
	return &scenario{
		name:        ScenarioRemoteFanIn,
		description: "one-way sends from 32 envs (one connection each) to one endpoint of another, as executors' status updates reach the driver",
		variants: func(*Config) []Params {
			return []Params{{Payload: localPayload, Senders: FanInExecutors, Endpoints: 1}}
		},
		sparkrpc: impl{name: ImplSparkrpc, run: sparkrpcRemoteFanIn},
		tls:      true,
		baselines: []impl{
			{name: ImplProtoactorRemote, run: protoactorRemoteFanIn, unavailable: raceUnavailable},
			{name: ImplTCP, run: tcpFanIn},
		},
	}
}

func remoteAskUnderFloodScenario() *scenario {
	return &scenario{
		name:        ScenarioRemoteAskUnderFlood,
		description: "asks of 16 B (1 in flight) while one-way messages of each payload size flood another endpoint over the same connection (head-of-line blocking)",
		variants: func(c *Config) []Params {
			var ps []Params
			for _, size := range c.Payloads {
				ps = append(ps, Params{Payload: size, InFlight: 1})
			}
			return ps
		},
		sparkrpc: impl{name: ImplSparkrpc, run: sparkrpcRemoteHOL},
		tls:      true,
		baselines: []impl{
			{name: ImplProtoactorRemote, run: protoactorRemoteHOL, unavailable: raceUnavailable},
			{name: ImplTCP, run: tcpHOL},
		},
		// An ask to an idle endpoint does not wait behind the flood
		// (endpoint credit, netty/credit.go), at every payload.
		targets: func(*Config, Params) []targetSpec {
			return []targetSpec{
				{name: "ask p50 ≤ 1,000 µs (1 ms)", metric: metricP50, atLeast: false, threshold: 1000},
				{name: "ask p99 ≤ 10,000 µs (10 ms)", metric: metricP99, atLeast: false, threshold: 10000},
			}
		},
	}
}

func executorRegistrationScenario() *scenario {
	return &scenario{
		name:        ScenarioExecutorRegistration,
		description: "executors (in-process envs over loopback) registering with the scheduler backend",
		variants: func(c *Config) []Params {
			return []Params{{Executors: executorsToRegister(c)}}
		},
		sparkrpc: impl{name: ImplSparkrpc, run: executorRegistration, unavailable: schedulerUnavailable},
		targets: func(c *Config, p Params) []targetSpec {
			return []targetSpec{{name: "1,000 executors registered in ≤ 2 s", metric: "seconds_per_1000_executors", atLeast: false, threshold: 2}}
		},
	}
}

func emptyTasksScenario() *scenario {
	return &scenario{
		name:        ScenarioEmptyTasks,
		description: "empty tasks through the scheduler backend with 4 one-core executors, one task per round trip on each",
		variants: func(c *Config) []Params {
			return []Params{{Executors: 4}}
		},
		sparkrpc:  impl{name: ImplSparkrpc, run: emptyTasks, unavailable: schedulerUnavailable},
		baselines: []impl{{name: ImplTCP, run: tcpEmptyTasks}, {name: ImplTCPDelivered, run: tcpDeliveredEmptyTasks}},
		targets: func(*Config, Params) []targetSpec {
			return []targetSpec{
				{name: "≥ 20,000 empty tasks/s with 4 executors", metric: "msgs_per_sec", atLeast: true, threshold: 20000},
				{name: "≥ 1.0× tcp-delivered tasks/s (the endpoint model's floor)", baseline: ImplTCPDelivered,
					metric: "msgs_per_sec", atLeast: true, threshold: 1.0},
			}
		},
	}
}

func emptyTasksEventLogScenario() *scenario {
	return &scenario{
		name: ScenarioEmptyTasksEventLog,
		description: "empty-tasks with the driver writing its event log (spark.eventLog.*'s defaults: one zstd file), " +
			"beside the same driver with a listener that does nothing instead (every driver the cluster runs has listeners: " +
			"its progress counter and UI)",
		variants: func(c *Config) []Params {
			return []Params{{Executors: 4}}
		},
		sparkrpc:  impl{name: ImplSparkrpc, run: emptyTasksEventLog, unavailable: schedulerUnavailable},
		baselines: []impl{{name: ImplSparkrpcNoEventLog, run: emptyTasksNopListener}},
		targets: func(*Config, Params) []targetSpec {
			return []targetSpec{{name: "event log costs ≤ 5% of empty tasks/s", baseline: ImplSparkrpcNoEventLog,
				metric: "msgs_per_sec", atLeast: true, threshold: 0.95}}
		},
	}
}

// executorsToRegister is the number of executors of the registration
// scenario: 1,000, fewer in quick runs.
func executorsToRegister(c *Config) int {
	if c.Quick {
		return 50
	}
	return 1000
}
