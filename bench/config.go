package bench

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Errors returned by the harness.
var (
	// ErrInvalidConfig is wrapped by Config.Validate and Run for a
	// configuration that cannot run (zero or negative counts, ...).
	ErrInvalidConfig = errors.New("bench: invalid configuration")
	// ErrUnknownScenario is wrapped by Config.Validate and Run for a
	// scenario name that Scenarios does not list.
	ErrUnknownScenario = errors.New("bench: unknown scenario")
	// ErrVerificationFailed is returned by Run (with the report) when a
	// message was lost, duplicated or reordered, or a scenario failed.
	ErrVerificationFailed = errors.New("bench: verification failed")
	// ErrStalled is wrapped when messages stop arriving before all did.
	ErrStalled = errors.New("bench: stalled")
	// ErrUnavailable is wrapped by MeasureOne for an implementation that
	// cannot run in this build (a package it needs is missing, or the race
	// detector is on for a baseline that races by itself).
	ErrUnavailable = errors.New("bench: not available")
	// ErrBadReport is wrapped by ReadJSON for a document that is not a
	// report of this format.
	ErrBadReport = errors.New("bench: not a bench report")
)

// Config says what a harness run measures. The zero value is not valid; start
// from DefaultConfig or QuickConfig.
type Config struct {
	// Scenarios are the scenario names to run (see Scenarios); empty runs
	// every scenario.
	Scenarios []string
	// Payloads are the payload sizes in bytes of the remote scenarios.
	// Local scenarios use a 16-byte payload.
	Payloads []int
	// InFlight is K, the number of asks in flight in the "K in flight"
	// variants (remote ask also runs with 1).
	InFlight int
	// Senders is N, the number of senders of the fan-in scenario.
	Senders int
	// Endpoints is the number of endpoints of the many-endpoints scenario
	// (ping-pong pairs: Endpoints/2 pairs).
	Endpoints int
	// LoopEndpoints is the number of endpoints (each with its own sender)
	// of the shared-loop and dedicated-loop scenarios.
	LoopEndpoints int
	// Count is the number of messages of each measured run. When it is zero,
	// each measured run lasts Duration instead.
	Count int64
	// Duration is the length of each measured run when Count is zero.
	Duration time.Duration
	// WarmupCount and Warmup are the warm-up run before each measured run:
	// WarmupCount messages when Count is set, else Warmup long. Zero skips
	// the warm-up.
	WarmupCount int64
	Warmup      time.Duration
	// Window bounds the one-way messages in flight (sent, not yet arrived)
	// of a send scenario; 0 picks max(64, min(65536, 16 MiB / payload)).
	Window int
	// Rounds measures every implementation of a variant this many times,
	// alternating them, and reports each implementation's median round (by
	// messages per second) and, as the ratios, the median of the per-round
	// ratios; 0 or 1 measures once.
	Rounds int
	// StallTimeout fails a run when no message arrives for this long.
	StallTimeout time.Duration
	// Quick marks a smoke-test run (recorded in the report).
	Quick bool
	// TLS runs the remote scenarios (remote-send, remote-ask, remote-fan-in,
	// remote-ask-under-flood) over TLS: sparkrpc's envs with spark.ssl.rpc.*
	// set, the raw TCP baseline over crypto/tls and protoactor's remote with
	// gRPC's TLS credentials, all with one self-signed ECDSA P-256
	// certificate made at the start of the run, which every side presents
	// and trusts (mutual TLS); its files live in a temporary folder removed
	// when the run ends. The connections a warm-up makes (sparkrpc's and raw
	// TCP's are made before it) are made, handshakes included, before a
	// measurement starts; with no warm-up, protoactor-remote's may
	// handshake within it. The other scenarios ignore it.
	TLS bool
}

// DefaultConfig returns the configuration of a full run: every scenario,
// payloads of 16 B, 1 KiB and 64 KiB, 64 asks in flight, 4 fan-in senders,
// 10,000 endpoints, 2-second runs after 0.5-second warm-ups.
func DefaultConfig() Config {
	return Config{
		Payloads:      []int{16, 1 << 10, 64 << 10},
		InFlight:      64,
		Senders:       4,
		Endpoints:     10000,
		LoopEndpoints: 8,
		Duration:      2 * time.Second,
		Warmup:        500 * time.Millisecond,
		StallTimeout:  20 * time.Second,
	}
}

// QuickConfig returns a configuration that runs every scenario briefly (well
// under 30 seconds in all) for smoke tests.
func QuickConfig() Config {
	c := DefaultConfig()
	c.Duration = 100 * time.Millisecond
	c.Warmup = 20 * time.Millisecond
	c.Endpoints = 2000
	c.Quick = true
	return c
}

// Validate reports a configuration that cannot run, wrapping
// ErrInvalidConfig or ErrUnknownScenario.
func (c *Config) Validate() error {
	for _, name := range c.Scenarios {
		if lookupScenario(name) == nil {
			return fmt.Errorf("%w %q (known: %v)", ErrUnknownScenario, name, ScenarioNames())
		}
	}
	if len(c.Payloads) == 0 {
		return fmt.Errorf("%w: no payload sizes", ErrInvalidConfig)
	}
	for _, p := range c.Payloads {
		if p <= 0 {
			return fmt.Errorf("%w: payload size %d must be positive", ErrInvalidConfig, p)
		}
		if p > 4<<20 {
			return fmt.Errorf("%w: payload size %d is above 4 MiB", ErrInvalidConfig, p)
		}
	}
	if c.InFlight <= 0 {
		return fmt.Errorf("%w: in-flight depth %d must be positive", ErrInvalidConfig, c.InFlight)
	}
	if c.Senders <= 0 {
		return fmt.Errorf("%w: senders %d must be positive", ErrInvalidConfig, c.Senders)
	}
	if c.Endpoints < 2 {
		return fmt.Errorf("%w: endpoints %d must be at least 2", ErrInvalidConfig, c.Endpoints)
	}
	if c.LoopEndpoints <= 0 {
		return fmt.Errorf("%w: loop endpoints %d must be positive", ErrInvalidConfig, c.LoopEndpoints)
	}
	if c.Count < 0 {
		return fmt.Errorf("%w: count %d must be positive", ErrInvalidConfig, c.Count)
	}
	if c.Count == 0 && c.Duration <= 0 {
		return fmt.Errorf("%w: need a positive count or duration", ErrInvalidConfig)
	}
	if c.WarmupCount < 0 || c.Warmup < 0 {
		return fmt.Errorf("%w: negative warm-up", ErrInvalidConfig)
	}
	if c.Window < 0 {
		return fmt.Errorf("%w: window %d must not be negative", ErrInvalidConfig, c.Window)
	}
	if c.Rounds < 0 {
		return fmt.Errorf("%w: rounds %d must not be negative", ErrInvalidConfig, c.Rounds)
	}
	if c.StallTimeout <= 0 {
		return fmt.Errorf("%w: stall timeout must be positive", ErrInvalidConfig)
	}
	return nil
}

func (c *Config) record() ConfigRecord {
	names := c.Scenarios
	if len(names) == 0 {
		names = ScenarioNames()
	}
	return ConfigRecord{
		Scenarios:       slices.Clone(names),
		Payloads:        slices.Clone(c.Payloads),
		InFlight:        c.InFlight,
		Senders:         c.Senders,
		Endpoints:       c.Endpoints,
		LoopEndpoints:   c.LoopEndpoints,
		Count:           c.Count,
		DurationSeconds: durationSeconds(c.Count, c.Duration),
		WarmupCount:     c.WarmupCount,
		WarmupSeconds:   durationSeconds(c.WarmupCount, c.Warmup),
		Window:          c.Window,
		Rounds:          c.Rounds,
		Quick:           c.Quick,
		TLS:             c.TLS,
	}
}

func durationSeconds(count int64, d time.Duration) float64 {
	if count > 0 {
		return 0
	}
	return d.Seconds()
}

// budget is how long one run lasts: count messages, or until deadline.
type budget struct {
	count    int64
	duration time.Duration
}

func (b budget) zero() bool { return b.count == 0 && b.duration == 0 }

func (c *Config) measured() budget {
	if c.Count > 0 {
		return budget{count: c.Count}
	}
	return budget{duration: c.Duration}
}

func (c *Config) warmup() budget {
	if c.Count > 0 {
		return budget{count: c.WarmupCount}
	}
	return budget{duration: c.Warmup}
}

func (c *Config) window(payload int) int {
	if c.Window > 0 {
		return c.Window
	}
	w := (16 << 20) / (payload + 16)
	return max(64, min(65536, w))
}
