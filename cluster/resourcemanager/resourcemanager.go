package resourcemanager

// This file holds the resource manager: its configuration, start and
// shutdown (the endpoint is in endpoint.go, the core in core.go, apps.go,
// nodes.go and scheduling.go).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Config configures a resource manager. It has no required
// field: the zero value is a resource manager with the queue "default", a
// temporary staging folder and a 60s node expiry.
type Config struct {
	// Queues are the queues applications may be submitted to (default
	// just "default").
	Queues []string
	// StagingDir holds one staging folder per application, removed when the
	// application ends or its submission fails (default: a new folder under
	// the system's temporary folder, removed by Shutdown).
	StagingDir string
	// MaxStagedBytes bounds the bytes one application may stage there (its
	// program and --files together). Zero: the env's conf's
	// spark.sparkrpc.yarn.staging.maxAppSize, default 8g.
	MaxStagedBytes int64
	// NodeExpiry is how long a node may miss heartbeats before it is lost
	// and its containers are reported failed (default 60s).
	NodeExpiry time.Duration
	// AMExpiry is how long an application master may go without a word to
	// the resource manager (its registration, then its allocate
	// heartbeats) from the launch of its container before its application
	// fails and its containers are stopped (YARN's AM liveness monitor,
	// yarn.am.liveness-monitor.expiry-interval-ms; default 10 minutes).
	AMExpiry time.Duration
	// CheckInterval is how often nodes and application masters are checked
	// (default NodeExpiry/4, at most 1s).
	CheckInterval time.Duration
	// AMNodes are the ids ("host:port" of their env) of nodes reserved for
	// application masters: an AM container goes to one of them when it has
	// room (else to any node), an executor container never does. The
	// embedded local cluster reserves one, so that its W workers each run an
	// executor.
	AMNodes []string
	// AppKeys is where the resource manager keeps its live applications'
	// secrets; its Lookup must be the resolver of the env's key ids
	// (netty.WithAuthKeys) so that application masters authenticate with
	// their application's secret. Nil: a table of its own (enough without
	// spark.authenticate).
	AppKeys *cluster.AppKeys
	// PeerKeyID tells which key the live connection of a peer identity
	// authenticated with ("" the cluster's, else an application id); it is
	// (*netty.Transport).PeerKeyID of the env's transport. Required when the
	// env's conf turns spark.authenticate on: application-master messages
	// are then accepted only from a connection authenticated with their
	// application's key, client, admin and node-manager messages only with
	// the cluster's.
	PeerKeyID func(identity string) (keyID string, ok bool)
	// AdminACLs are users that may kill any application and read any
	// application's logs (the resource manager's spark.admin.acls; "*":
	// everyone).
	AdminACLs []string
	// MaxCompletedApps is how many ended applications the resource manager
	// keeps for reports and listings; past it the oldest are forgotten
	// (YARN's yarn.resourcemanager.max-completed-applications). Zero:
	// DefaultMaxCompletedApps (1000).
	MaxCompletedApps int
	// InactiveNodeRetention is how long a node that was lost or shut down
	// stays listed (SHUTDOWN or LOST) before it is forgotten; a node
	// manager restarted on a new port registers as a new node. Zero:
	// DefaultInactiveNodeRetention (10 minutes).
	InactiveNodeRetention time.Duration
	// Logger is the resource manager's logger (nil: the env's).
	Logger *zerolog.Logger
	// Now returns the current time (nil: time.Now); for tests.
	Now func() time.Time
}

// ResourceManager is the cluster's resource manager (YARN's
// ResourceManager): it tracks nodes, accepts applications, launches their
// application masters and gives them containers.
type ResourceManager struct {
	cfg        Config
	env        *actor.Env
	ref        *actor.Ref
	log        zerolog.Logger
	ownStaging bool
	auth       bool // spark.authenticate is on in the env's conf
	keys       *cluster.AppKeys
	ts         int64
	stop       chan struct{}
	done       chan struct{}
	stopped    chan struct{} // closed by the endpoint's OnStop
	asks       *nodeAsks
	stopOnce   sync.Once
	// unlockStaging releases the lock on a given staging folder
	// (lockStaging), which tells other resource managers on it that this
	// one still runs.
	unlockStaging func()
}

// Start registers the resource manager's endpoint on env,
// which must listen for node managers and application masters on other
// envs to reach it.
func Start(env *actor.Env, cfg Config) (*ResourceManager, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NodeExpiry <= 0 {
		cfg.NodeExpiry = 60 * time.Second
	}
	if cfg.AMExpiry <= 0 {
		cfg.AMExpiry = DefaultAMExpiry
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = min(time.Second, cfg.NodeExpiry/4)
	}
	log := env.Logger()
	if cfg.Logger != nil {
		log = *cfg.Logger
	}
	rm := &ResourceManager{cfg: cfg, env: env, log: log.With().Str("component", "resourcemanager").Logger(),
		ts: cfg.Now().UnixMilli(), stop: make(chan struct{}), done: make(chan struct{}), stopped: make(chan struct{}), asks: newNodeAsks(),
		auth: cluster.AuthOn(env.Conf()), keys: cfg.AppKeys}
	if rm.keys == nil {
		rm.keys = cluster.NewAppKeys()
	}
	if rm.auth && cfg.PeerKeyID == nil {
		return nil, cluster.ConfigError("resourcemanager.Config", "PeerKeyID", "is required with spark.authenticate on (the env's transport's PeerKeyID)")
	}
	if err := rm.openStagingFolder(); err != nil {
		return nil, err
	}
	staging, err := newStaging(env.Conf(), rm.cfg.StagingDir, cfg.MaxStagedBytes)
	if err != nil {
		rm.closeStagingFolder(false)
		return nil, err
	}
	core := newRMCore(rm.ts, cfg.Queues, cfg.Now)
	if cfg.MaxCompletedApps > 0 {
		core.maxCompleted = cfg.MaxCompletedApps
	}
	core.amExpiry = rm.cfg.AMExpiry
	if cfg.InactiveNodeRetention > 0 {
		core.nodeRetention = cfg.InactiveNodeRetention
	}
	for _, id := range cfg.AMNodes {
		core.amNodes[id] = true
	}
	ep := newRMEndpoint(rm, core, staging)
	ref, err := env.RegisterEndpoint(cluster.ResourceManagerEndpointName, ep)
	if err != nil {
		rm.asks.cancel()
		rm.closeStagingFolder(false)
		return nil, err
	}
	rm.ref = ref
	if err := env.Metrics().Register(rmCollector{rm}); err != nil {
		rm.log.Warn().Err(err).Msg("resource manager metrics not registered")
	}
	go rm.ticker()
	rm.log.Info().Str("address", env.Address().String()).Str("staging", rm.cfg.StagingDir).Msg("resource manager started")
	return rm, nil
}

// Address returns the address node managers and clients use.
func (rm *ResourceManager) Address() actor.RpcAddress { return rm.env.Address() }

// Ref returns the reference of the resource manager's endpoint (what its
// web UI asks for reports).
func (rm *ResourceManager) Ref() *actor.Ref { return rm.ref }

// ClusterTimestamp returns the start time (Unix ms) used in application ids.
func (rm *ResourceManager) ClusterTimestamp() int64 { return rm.ts }

// StagingDir returns the folder holding the applications' staging folders.
func (rm *ResourceManager) StagingDir() string { return rm.cfg.StagingDir }

// newStaging returns the staging area of the folder root: an application
// stages at most limit bytes (zero: conf's
// spark.sparkrpc.yarn.staging.maxAppSize, default 8g), and node managers
// read chunks that fit conf's spark.rpc.message.maxSize.
func newStaging(conf *actor.Conf, root string, limit int64) (*stagingArea, error) {
	if limit <= 0 {
		n, err := conf.GetSizeAsBytes(cluster.KeyStagingMaxAppSize, defaultMaxStagedBytes, 1)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, &actor.ConfError{Key: cluster.KeyStagingMaxAppSize, Value: conf.Get(cluster.KeyStagingMaxAppSize, ""),
				Err: errors.New("must be positive")}
		}
		limit = n
	}
	maxSize, err := conf.MaxMessageSize()
	if err != nil {
		return nil, err
	}
	return newStagingArea(root, limit, cluster.StageChunkSize(maxSize)), nil
}

func (rm *ResourceManager) ticker() {
	defer close(rm.done)
	t := time.NewTicker(rm.cfg.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-rm.stop:
			return
		case <-t.C:
			_ = rm.ref.Send(&messages.RmTick{Kind: "nodes"})
		}
	}
}

// Shutdown stops the resource manager's endpoint, waits until it has
// handled what was queued for it and until its asks to node managers are
// done (cancelled), and removes the staging folder if the resource manager
// created it. It does not shut the env down. If ctx ends first, the asks
// are cancelled, the folder is removed all the same, and the error says so.
func (rm *ResourceManager) Shutdown(ctx context.Context) error {
	var err error
	rm.stopOnce.Do(func() {
		close(rm.stop)
		<-rm.done
		rm.env.Metrics().Unregister(rmCollector{rm})
		_ = rm.env.Stop(rm.ref)
		select {
		case <-rm.stopped:
			rm.asks.cancel()
			rm.asks.wg.Wait() // no handler starts one after OnStop
		case <-ctx.Done():
			rm.asks.cancel()
			err = fmt.Errorf("cluster: resource manager shutdown: %w", context.Cause(ctx))
		}
		rm.closeStagingFolder(err == nil)
	})
	return err
}
