package yarn

// This file holds submission to a resource manager (rm://host:port or the
// embedded local cluster): cluster mode, where the driver runs in the
// application master, and the choices common to both deploy modes.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/driverrun"
	"github.com/sparkrpc/sparkrpc/cluster/rmclient"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
)

// quietLogger returns log for an env whose connection failures are all
// reported as errors of the calls that needed them: only errors, unless
// log is at debug level or below.
func quietLogger(log zerolog.Logger) zerolog.Logger {
	if log.GetLevel() > zerolog.DebugLevel {
		return log.Level(max(log.GetLevel(), zerolog.ErrorLevel))
	}
	return log
}

// runOnLocalCluster starts the embedded cluster of a local-cluster[W,C,M]
// master, sized for the application (one executor per worker by default,
// and a node of its own for the application master), runs the application
// on it and shuts it down.
func runOnLocalCluster(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc, mode string) error {
	// The embedded node managers run Executable where no program is
	// shipped: it must be one that plays the containers' roles.
	exe := cmp.Or(cfg.Executable, cfg.Program)
	if exe == "" {
		return fmt.Errorf("%w: the containers of %s run a program in the roles of application master and executor: "+
			"hand main's command line over to launcher.Run (package launcher), or set SubmitConfig.Program", cluster.ErrNoProgram, cfg.Master)
	}
	conf := cfg.Conf
	m := cfg.Master
	conf.SetIfMissing(cluster.KeyDriverMemory, fmt.Sprintf("%dm", min(1024, m.WorkerMemoryMB)))
	conf.SetIfMissing(cluster.KeyExecutorMemory, fmt.Sprintf("%dm", min(1024, m.WorkerMemoryMB)))
	conf.SetIfMissing(cluster.KeyAMMemory, fmt.Sprintf("%dm", min(512, m.WorkerMemoryMB)))
	// As in Spark: each of the W workers runs one executor with its C cores.
	conf.SetIfMissing(cluster.KeyExecutorCores, strconv.Itoa(m.WorkerCores))
	n, err := executorsThatFit(conf, m, mode)
	if err != nil {
		return err
	}
	conf.SetIfMissing(cluster.KeyNumExecutors, strconv.Itoa(max(1, n)))
	want, err := conf.GetInt(cluster.KeyNumExecutors, n)
	if err != nil {
		return err
	}
	if n == 0 && want > 0 {
		return noExecutorFits(conf, m, mode)
	}
	if want > n {
		warnFewResources(cfg.Stderr, conf, want, n, m.String())
	}
	lcc, err := localClusterConfig(cfg, exe, mode)
	if err != nil {
		return err
	}
	lc, err := StartLocalCluster(ctx, lcc)
	if err != nil {
		return cluster.Wrapf(err, "cannot start the local cluster")
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := lc.Shutdown(sctx); err != nil {
			cfg.Logger.Warn().Err(err).Msg("local cluster shutdown")
		}
	}()
	conf.SetIfMissing(cluster.KeyReportInterval, "200ms")
	if mode == "cluster" {
		// The embedded cluster lives only as long as this command: not
		// waiting would shut it down under the application.
		if wait, err := conf.GetBool(cluster.KeyWaitAppCompletion, true); err == nil && !wait {
			cfg.Logger.Warn().Msgf("%s=false has no effect on local-cluster: the embedded cluster lives as long as submit, which waits for the application",
				cluster.KeyWaitAppCompletion)
		}
		conf.Set(cluster.KeyWaitAppCompletion, "true")
	}
	return runOnRM(ctx, cfg, fn, lc.Address(), mode, true)
}

// localClusterConfig is the embedded cluster of cfg's local-cluster master,
// whose containers run exe, for an application in deploy mode mode.
func localClusterConfig(cfg cluster.SubmitConfig, exe, mode string) (LocalClusterConfig, error) {
	conf, m := cfg.Conf, cfg.Master
	expiry, err := conf.GetDuration(cluster.KeyNodeExpiry, "60s", time.Millisecond)
	if err != nil {
		return LocalClusterConfig{}, err
	}
	amMem, amCores, err := amResource(conf, mode)
	if err != nil {
		return LocalClusterConfig{}, err
	}
	// The node managers' UIs serve the executors' log links; they go with
	// the driver's UI.
	nodeUIs, err := conf.GetBool(webui.KeyUIEnabled, true)
	if err != nil {
		return LocalClusterConfig{}, err
	}
	secret, err := localClusterSecret(conf)
	if err != nil {
		return LocalClusterConfig{}, err
	}
	return LocalClusterConfig{Secret: secret, TLS: cluster.SubConf(conf, isSSLKey), Workers: m.Workers, WorkerCores: m.WorkerCores, WorkerMemoryMB: m.WorkerMemoryMB,
		AMNode: cluster.Resource{MemoryMB: amMem, Cores: amCores},
		Dir:    conf.Get(cluster.KeyLocalClusterDir, ""), Executable: exe, NodeExpiry: expiry, Logger: cfg.Logger,
		EnvWhitelist: cluster.SplitList(conf.Get(cluster.KeyContainerEnvWhitelist, "")), NodeUIs: nodeUIs}, nil
}

// localClusterSecret is the secret the embedded daemons share with
// spark.authenticate (none without): the one conf gives (so that its user
// can open the daemons' UIs), else a generated one, which conf then holds,
// as this process's client uses it too. The application gets another
// (runOnRM).
func localClusterSecret(conf *actor.Conf) ([]byte, error) {
	if !cluster.AuthOn(conf) {
		return nil, nil
	}
	secret, err := netty.AuthSecret(conf)
	if err != nil && !errors.Is(err, netty.ErrNoSecret) {
		return nil, err
	}
	if len(secret) == 0 {
		if secret, err = cluster.GenerateSecret(); err != nil {
			return nil, err
		}
	}
	cluster.SetSecret(conf, secret)
	return secret, nil
}

// runOnRM submits to the resource manager at rm: cluster mode submits the
// AM with the application; client mode runs the driver here and submits an
// AM that only allocates executors.
func runOnRM(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc, rm actor.RpcAddress, mode string, embedded bool) error {
	conf := cfg.Conf
	log := cfg.Logger
	driverMem, err := memoryMB(conf, cluster.KeyDriverMemory, "1g")
	if err != nil {
		return err
	}
	driverCores, err := conf.GetInt(cluster.KeyDriverCores, 1)
	if err != nil {
		return err
	}
	execMem, err := memoryMB(conf, cluster.KeyExecutorMemory, "1g")
	if err != nil {
		return err
	}
	execCores, err := conf.GetInt(cluster.KeyExecutorCores, 1)
	if err != nil {
		return err
	}
	reportInterval, err := conf.GetDuration(cluster.KeyReportInterval, "1s", time.Millisecond)
	if err != nil {
		return err
	}
	host := conf.Get("spark.driver.host", localHostFor(rm))
	// Every failure of the submitting env's connection comes back as an
	// error of the call that needed it: its warnings would only come
	// before that error (they are kept at debug level).
	quiet := quietLogger(log)
	var net, clientNet cluster.Network = cluster.TCPNetwork{BindHost: conf.Get("spark.driver.bindAddress", host), AdvertiseHost: host, Logger: &log},
		cluster.TCPNetwork{Logger: &quiet}
	if cfg.Network != nil {
		net, clientNet = cfg.Network, cfg.Network
	}
	// The client talks to the resource manager with the cluster's secret
	// (conf's, as given); the application, its driver here in client mode
	// included, uses its own secret, generated here as Spark on YARN does.
	cenv, err := clientNet.Client("sparkSubmit", conf.Clone())
	if err != nil {
		return err
	}
	defer cluster.ShutdownEnv(cenv, log)
	client := rmclient.New(cenv, rm)
	appKeys := cluster.NewAppKeys()
	appSecret, net, err := useAppSecret(conf, net, appKeys)
	if err != nil {
		return err
	}
	acls, err := cluster.ACLsFromConf(conf)
	if err != nil {
		return err
	}
	printer := &reportPrinter{w: cfg.Stderr, tty: driverrun.IsTerminal(cfg.Stderr), hideLogs: embedded && !conf.Contains(cluster.KeyLocalClusterDir)}
	sub := rmclient.Submission{Name: conf.Get(cluster.KeyAppName, cfg.Class), Queue: conf.Get(cluster.KeyQueue, "default"),
		ExecutorResource: cluster.Resource{MemoryMB: execMem, Cores: execCores}, ReportInterval: reportInterval,
		AppSecret: appSecret, ACLs: acls, Program: cfg.Program, Files: cfg.Files}
	if !embedded {
		checkCapacity(ctx, cfg.Stderr, client, conf, mode, sub.ExecutorResource)
	}

	if mode == "cluster" {
		sub.AMResource = cluster.Resource{MemoryMB: driverMem, Cores: driverCores}
		return runClusterMode(ctx, cfg, client, sub, printer, embedded)
	}
	printer.noTasks = true
	return runClientMode(ctx, cfg, fn, client, sub, net, printer, appKeys)
}

// runClusterMode submits the application with an AM that runs it as the
// driver, and follows it until it ends (unless
// spark.yarn.submit.waitAppCompletion is false). Interrupted, it kills an
// embedded cluster's application, and says how to kill another.
func runClusterMode(ctx context.Context, cfg cluster.SubmitConfig, client *rmclient.Client, sub rmclient.Submission, printer *reportPrinter, embedded bool) error {
	conf := cfg.Conf
	// Read before anything is submitted: a malformed value must not fail
	// the command once the application runs.
	wait, err := conf.GetBool(cluster.KeyWaitAppCompletion, true)
	if err != nil {
		return err
	}
	sub.AMCommand = append([]string{"sparkrpc", "applicationmaster", "--class", cfg.Class, "--rm", client.Address().HostPort(), "--"}, cfg.Args...)
	sub.Conf = conf.All()
	h, err := client.Submit(ctx, sub)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stderr, "Submitted application %s\n", h.AppID())
	if !wait {
		r, err := h.Poll(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(cfg.Stderr, "Application report for %s (state: %s)\n", r.ID, r.State)
		return nil
	}
	h.AddListener(printer)
	r, err := h.Wait(ctx)
	if ctx.Err() != nil {
		if !embedded {
			return fmt.Errorf("%w: application %s keeps running (stop it with submit --master %s --kill %s)",
				err, h.AppID(), cfg.Master, h.AppID())
		}
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, kerr := client.Kill(kctx, h.AppID(), "Application killed: the submitting command was interrupted.")
		cancel()
		if kerr == nil {
			err = fmt.Errorf("%w: killed application %s", err, h.AppID())
		}
	}
	if embedded && r != nil {
		printDriverOutput(cfg.Stdout, r)
	}
	return err
}

// useAppSecret, with spark.authenticate on, generates the application's
// secret and puts it in conf in place of the keys that gave the cluster's,
// and has a TCP network accept the application's key ids from appKeys (a
// client-mode AM dials the driver with its application id). The driver's
// UI, which takes the application's secret, is given a verifier of the
// cluster's (webui.KeyUISecretVerifier), so that the user who submitted
// can open it with the secret they have. It returns the application's
// secret (nil with authentication off) and the network to use.
func useAppSecret(conf *actor.Conf, net cluster.Network, appKeys *cluster.AppKeys) ([]byte, cluster.Network, error) {
	if !cluster.AuthOn(conf) {
		return nil, net, nil
	}
	appSecret, err := cluster.GenerateSecret()
	if err != nil {
		return nil, nil, err
	}
	if userSecret, err := netty.AuthSecret(conf); err == nil {
		v, err := webui.NewSecretVerifier(userSecret)
		if err != nil {
			return nil, nil, err
		}
		conf.Set(webui.KeyUISecretVerifier, v)
	} else if !errors.Is(err, netty.ErrNoSecret) {
		return nil, nil, err
	}
	cluster.SetSecret(conf, appSecret)
	if tn, ok := net.(cluster.TCPNetwork); ok {
		tn.AuthKeys = appKeys.Lookup
		net = tn
	}
	return appSecret, net, nil
}

// localHostFor returns this machine's address on the route to addr (so
// that processes there can reach back), or 127.0.0.1.
func localHostFor(addr actor.RpcAddress) string {
	host := strings.TrimSuffix(strings.TrimPrefix(addr.Host, "["), "]")
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() || host == "localhost" {
		return "127.0.0.1"
	}
	conn, err := net.Dial("udp", addr.HostPort())
	if err != nil {
		return "127.0.0.1"
	}
	defer conn.Close()
	if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok {
		return ua.IP.String()
	}
	return "127.0.0.1"
}

// Manager is the cluster manager of local-cluster[W,C,M] (a resource
// manager and node managers embedded in the submitting process) and of
// rm://host:port (a running resource manager), in client and cluster
// deploy mode, as Spark's YARN client.
type Manager struct{}

// Accepts reports whether m is local-cluster[W,C,M] or rm://host:port.
func (Manager) Accepts(m cluster.Master) bool {
	return m.Kind == cluster.MasterLocalCluster || m.Kind == cluster.MasterRM
}

// Submit runs fn on m and waits for it (see cluster.Submit). On
// local-cluster it refuses at once (with an error matching
// cluster.ErrResourceTooLarge) an AM or an executor larger than a node, as
// such an application could never run. cfg.Program and cfg.Files are
// staged on the resource manager and localized by the node managers for
// every container (rmclient.Submission); files with one base name are
// refused before anything starts, with an error matching
// cluster.ErrDuplicateResource.
func (Manager) Submit(ctx context.Context, cfg cluster.SubmitConfig, fn cluster.AppFunc) error {
	if _, err := rmclient.Resources(cfg.Program, cfg.Files); err != nil {
		return err
	}
	mode := cluster.DeployMode(cfg.Conf)
	if cfg.Master.Kind == cluster.MasterLocalCluster {
		return runOnLocalCluster(ctx, cfg, fn, mode)
	}
	return runOnRM(ctx, cfg, fn, cfg.Master.Address, mode, false)
}

// isSSLKey reports whether key is one of spark.ssl.*, which the embedded
// daemons' connections take from the submission, to keep to its TLS.
func isSSLKey(key string) bool { return strings.HasPrefix(key, "spark.ssl.") }
