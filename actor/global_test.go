package actor_test

import (
	"context"
	"testing"

	cmap "github.com/orcaman/concurrent-map"
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
)

// The package changes no other package's global: concurrent-map, which
// protoactor's process registry uses, keeps its default shard count.
func TestNoGlobalSideEffects(t *testing.T) {
	if cmap.SHARD_COUNT != 32 {
		t.Errorf("cmap.SHARD_COUNT = %d, want its default 32: something in the process changed it", cmap.SHARD_COUNT)
	}
}

// An env that nobody asks for its protoactor system does not build one: a
// protoactor actor system allocates over a thousand maps for its process
// registry (tens of thousands of allocations with concurrent-map's default
// shard count), which made an in-process executor env far heavier than it
// needs to be.
func TestEnvIsLight(t *testing.T) {
	allocs := testing.AllocsPerRun(20, func() {
		e, err := actor.NewEnv("light", nil, actor.WithLogger(zerolog.Nop()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.RegisterEndpoint("ep", &testEndpoint{}); err != nil {
			t.Fatal(err)
		}
		if err := e.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("NewEnv + RegisterEndpoint + Shutdown: %.0f allocations", allocs)
	if allocs > 1000 {
		t.Errorf("an env with one endpoint costs %.0f allocations, want at most 1000 (no protoactor actor system)", allocs)
	}
}
