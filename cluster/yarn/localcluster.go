package yarn

// This file holds LocalCluster, a resource manager and node managers
// embedded in this process (the local-cluster[W,C,M] master).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager/nmui"
	"github.com/sparkrpc/sparkrpc/cluster/resourcemanager"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
)

// LocalCluster is a resource manager and node managers in this process
// (the local-cluster[W,C,M] master): containers are child processes of this
// process, talking over loopback TCP. Besides its W workers it can have a
// node of its own for the application master (LocalClusterConfig.AMNode),
// so that, as in Spark's local-cluster, each of the W workers is free to
// run an executor.
type LocalCluster struct {
	rm     *resourcemanager.ResourceManager
	rmEnv  *actor.Env
	nms    []*nodemanager.NodeManager
	nmEnvs []*actor.Env
	nmUIs  []*webui.Server
	dir    string
	ownDir bool
	log    zerolog.Logger
}

// LocalClusterConfig configures StartLocalCluster. Workers, WorkerCores
// and WorkerMemoryMB are required (StartLocalCluster fails with
// ErrInvalidConfig without them); every other field's zero value means its
// default.
type LocalClusterConfig struct {
	// Workers node managers with WorkerCores cores and WorkerMemoryMB MiB
	// each (required: all at least 1).
	Workers, WorkerCores int
	WorkerMemoryMB       int64
	// AMNode, when not zero, adds a node manager with this capability that
	// the resource manager reserves for application masters
	// (resourcemanager.Config.AMNodes): the AM takes none of the workers'
	// resources, and no executor runs on the AM's node.
	AMNode cluster.Resource
	// Dir holds the nodes' folders and the staging folders; default a new
	// temporary folder, removed by Shutdown.
	Dir string
	// Executable is what containers run (default os.Executable()).
	Executable string
	// NodeExpiry is the resource manager's node expiry (default 60s).
	NodeExpiry time.Duration
	// Logger is the cluster's logger (the zero Logger discards).
	Logger zerolog.Logger
	// EnvWhitelist is the node managers' nodemanager.Config.EnvWhitelist.
	EnvWhitelist []string
	// Secret, when set, turns spark.authenticate on for the cluster's
	// daemons: it is the cluster's secret, which the resource manager, the
	// node managers and their clients share (applications have their own).
	Secret []byte
	// NodeUIs starts a web UI on loopback for each node manager, as a
	// node manager daemon has: its containers' logs, whose http URLs
	// executors get as their log links (nodemanager.Config.WebUI). Secret,
	// when set, guards them.
	NodeUIs bool
	// TLS, when not nil, holds the spark.ssl.* keys of the daemons'
	// connections (netty.KeySSLEnabled and the files it needs): with them,
	// the resource manager and the node managers listen and dial with TLS,
	// as the clients and containers of a submission with the same keys do.
	TLS *actor.Conf
}

// validate checks the required fields.
func (cfg *LocalClusterConfig) validate() error {
	switch {
	case cfg.Workers < 1:
		return cluster.ConfigError("yarn.LocalClusterConfig", "Workers", "must be at least 1, not %d", cfg.Workers)
	case cfg.WorkerCores < 1:
		return cluster.ConfigError("yarn.LocalClusterConfig", "WorkerCores", "must be at least 1, not %d", cfg.WorkerCores)
	case cfg.WorkerMemoryMB < 1:
		return cluster.ConfigError("yarn.LocalClusterConfig", "WorkerMemoryMB", "must be at least 1, not %d", cfg.WorkerMemoryMB)
	}
	return nil
}

// StartLocalCluster starts a resource manager and cfg.Workers node managers
// on loopback.
func StartLocalCluster(ctx context.Context, cfg LocalClusterConfig) (lc *LocalCluster, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	lc = &LocalCluster{dir: cfg.Dir, log: cfg.Logger}
	if lc.dir == "" {
		if lc.dir, err = os.MkdirTemp("", "sparkrpc-local-cluster-"); err != nil {
			return nil, err
		}
		lc.ownDir = true
	}
	defer func() {
		if err != nil {
			_ = lc.Shutdown(context.Background())
		}
	}()
	keys := cluster.NewAppKeys()
	net := cluster.TCPNetwork{BindHost: "127.0.0.1", Logger: &cfg.Logger, AuthKeys: keys.Lookup}
	conf := actor.NewConf()
	if cfg.TLS != nil {
		conf = cfg.TLS.Clone()
	}
	if len(cfg.Secret) > 0 {
		conf.Set(netty.KeyAuthenticate, "true").Set(netty.KeyAuthenticateSecret, string(cfg.Secret))
	}
	var rmTransport *netty.Transport
	if lc.rmEnv, rmTransport, err = net.ListenTransport("sparkResourceManager", conf, 0); err != nil {
		return lc, err
	}
	type node struct {
		env       *actor.Env
		transport *netty.Transport
		res       cluster.Resource
		name      string
	}
	var nodes []node
	var amNodes []string
	nmNet := net
	nmNet.AuthKeys = nil // node managers take the cluster's key only
	if cfg.AMNode.MemoryMB > 0 && cfg.AMNode.Cores > 0 {
		// Listening first: the resource manager reserves it by its id.
		env, t, err := nmNet.ListenTransport("sparkNodeManagerAM", conf, 0)
		if err != nil {
			return lc, err
		}
		lc.nmEnvs = append(lc.nmEnvs, env)
		nodes = append(nodes, node{env: env, transport: t, res: cfg.AMNode, name: "am-node"})
		amNodes = append(amNodes, env.Address().HostPort())
	}
	lc.rm, err = resourcemanager.Start(lc.rmEnv, resourcemanager.Config{StagingDir: filepath.Join(lc.dir, "staging"),
		NodeExpiry: cfg.NodeExpiry, AMNodes: amNodes, Logger: &cfg.Logger, AppKeys: keys, PeerKeyID: rmTransport.PeerKeyID})
	if err != nil {
		return lc, err
	}
	for i := 0; i < cfg.Workers; i++ {
		env, t, err := nmNet.ListenTransport(fmt.Sprintf("sparkNodeManager%d", i+1), conf, 0)
		if err != nil {
			return lc, err
		}
		lc.nmEnvs = append(lc.nmEnvs, env)
		nodes = append(nodes, node{env: env, transport: t, res: cluster.Resource{MemoryMB: cfg.WorkerMemoryMB, Cores: cfg.WorkerCores},
			name: fmt.Sprintf("node%d", i+1)})
	}
	for _, n := range nodes {
		var shown nmui.Node
		ui, err := lc.startNodeUI(cfg, n.env, &shown)
		if err != nil {
			return lc, err
		}
		nm, err := nodemanager.Start(ctx, n.env, nodemanager.Config{ResourceManager: lc.rm.Address(), Capability: n.res,
			Dir: filepath.Join(lc.dir, n.name), Executable: cfg.Executable, Logger: &cfg.Logger, EnvWhitelist: cfg.EnvWhitelist,
			PeerKeyID: n.transport.PeerKeyID, WebUI: ui})
		if err != nil {
			return lc, err
		}
		shown.Set(nm)
		lc.nms = append(lc.nms, nm)
	}
	return lc, nil
}

// startNodeUI starts the web UI of the node manager on env that shown will
// hold, when cfg asks for node UIs, and returns its URL ("" for none).
func (lc *LocalCluster) startNodeUI(cfg LocalClusterConfig, env *actor.Env, shown *nmui.Node) (string, error) {
	if !cfg.NodeUIs {
		return "", nil
	}
	opts := []webui.Option{webui.WithSecret(string(cfg.Secret)), webui.WithLogger(cfg.Logger)}
	ui, err := webui.Start("NodeManager web UI", nmui.Handler(env.Address().HostPort(), shown, opts...), "127.0.0.1", "", 0, 0, cfg.Logger)
	if err != nil {
		return "", err
	}
	lc.nmUIs = append(lc.nmUIs, ui)
	return ui.URL(), nil
}

// Address returns the resource manager's address.
func (lc *LocalCluster) Address() actor.RpcAddress { return lc.rm.Address() }

// ResourceManager returns the embedded resource manager.
func (lc *LocalCluster) ResourceManager() *resourcemanager.ResourceManager { return lc.rm }

// NodeManagers returns the embedded node managers: the application
// master's node first when there is one, then the workers.
func (lc *LocalCluster) NodeManagers() []*nodemanager.NodeManager { return lc.nms }

// NodeUIs returns the URLs of the node managers' web UIs, in the order of
// NodeManagers (none without LocalClusterConfig.NodeUIs).
func (lc *LocalCluster) NodeUIs() []string {
	urls := make([]string, len(lc.nmUIs))
	for i, ui := range lc.nmUIs {
		urls[i] = ui.URL()
	}
	return urls
}

// Dir returns the cluster's folder.
func (lc *LocalCluster) Dir() string { return lc.dir }

// Shutdown stops every container, the node managers and the resource
// manager, and removes the cluster's folder if it created it.
func (lc *LocalCluster) Shutdown(ctx context.Context) error {
	var errs []error
	for _, nm := range lc.nms {
		if err := nm.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ui := range lc.nmUIs {
		errs = append(errs, ui.Shutdown(ctx))
	}
	if lc.rm != nil {
		errs = append(errs, lc.rm.Shutdown(ctx))
	}
	for _, env := range append(lc.nmEnvs, lc.rmEnv) {
		if env != nil {
			if err := env.Shutdown(ctx); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if lc.ownDir {
		errs = append(errs, os.RemoveAll(lc.dir))
	}
	return errors.Join(errs...)
}
