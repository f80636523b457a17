package driverrun

// This file holds how the runners start dynamic allocation (the
// driver's ExecutorAllocationManager) beside a driver whose executors come
// from a cluster manager.

import (
	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// newAllocation returns d's ExecutorAllocationManager, not started, when
// spark.dynamicAllocation.enabled is true and d has a cluster manager;
// nil otherwise (on a local master, with a warning, as Spark ignores the
// key there). A configuration that does not parse is an error.
func newAllocation(d *endpoints.Driver, cm endpoints.ClusterManager, log zerolog.Logger) (*endpoints.ExecutorAllocationManager, error) {
	cfg, err := endpoints.ParseAllocationConfig(d.Env().Conf())
	if err != nil || !cfg.Enabled {
		return nil, err
	}
	if cm == nil {
		log.Warn().Msgf("%s is ignored: this master has no cluster manager to ask for executors", endpoints.KeyDynamicAllocationEnabled)
		return nil, nil
	}
	log.Info().Int("min", cfg.MinExecutors).Int("max", cfg.MaxExecutors).Int("initial", cfg.InitialExecutors).
		Dur("idle_timeout", cfg.IdleTimeout).Dur("backlog_timeout", cfg.BacklogTimeout).
		Dur("sustained_backlog_timeout", cfg.SustainedBacklogTimeout).Float64("ratio", cfg.AllocationRatio).
		Msg("Dynamic allocation is enabled")
	return endpoints.NewExecutorAllocationManager(d, cfg)
}
