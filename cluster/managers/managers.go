package managers

import (
	"context"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes"
	"github.com/sparkrpc/sparkrpc/cluster/local"
	"github.com/sparkrpc/sparkrpc/cluster/yarn"
)

// All returns the cluster managers of local[N] (cluster/local),
// local-cluster[W,C,M] and rm:// (cluster/yarn), and k8s://
// (cluster/kubernetes).
func All() []cluster.ClusterManager {
	return []cluster.ClusterManager{local.Manager{}, yarn.Manager{}, kubernetes.Manager{}}
}

// Submit runs an application on cfg.Master with the cluster manager of All
// that takes it, and waits for it to end: cluster.Submit with All.
func Submit(ctx context.Context, cfg cluster.SubmitConfig) error {
	return cluster.Submit(ctx, cfg, All()...)
}
