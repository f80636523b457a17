package cluster

// This file holds submission to a resource manager (rm://host:port or the
// embedded local cluster): cluster mode, where the driver runs in the
// application master, and the choices common to both deploy modes.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
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
func runOnLocalCluster(ctx context.Context, cfg SubmitConfig, fn AppFunc, mode string) error {
	conf := cfg.Conf
	m := cfg.Master
	conf.SetIfMissing(KeyDriverMemory, fmt.Sprintf("%dm", min(1024, m.WorkerMemoryMB)))
	conf.SetIfMissing(KeyExecutorMemory, fmt.Sprintf("%dm", min(1024, m.WorkerMemoryMB)))
	conf.SetIfMissing(KeyAMMemory, fmt.Sprintf("%dm", min(512, m.WorkerMemoryMB)))
	// As in Spark: each of the W workers runs one executor with its C cores.
	conf.SetIfMissing(KeyExecutorCores, strconv.Itoa(m.WorkerCores))
	n, err := executorsThatFit(conf, m, mode)
	if err != nil {
		return err
	}
	conf.SetIfMissing(KeyNumExecutors, strconv.Itoa(max(1, n)))
	want, err := conf.GetInt(KeyNumExecutors, n)
	if err != nil {
		return err
	}
	if n == 0 && want > 0 {
		return noExecutorFits(conf, m, mode)
	}
	if want > n {
		warnFewResources(cfg.Stderr, conf, want, n, m.String())
	}
	expiry, err := conf.GetDuration(KeyNodeExpiry, "60s", time.Millisecond)
	if err != nil {
		return err
	}
	amMem, amCores, err := amResource(conf, mode)
	if err != nil {
		return err
	}
	// With spark.authenticate the embedded daemons share a secret of their
	// own, which this process's client uses too: the one the conf gives
	// (so that its user can open the daemons' UIs), else a generated one.
	// The application gets another (runOnRM).
	var clusterSecret []byte
	if authOn(conf) {
		if clusterSecret, err = netty.AuthSecret(conf); err != nil && !errors.Is(err, netty.ErrNoSecret) {
			return err
		}
		if len(clusterSecret) == 0 {
			if clusterSecret, err = GenerateSecret(); err != nil {
				return err
			}
		}
		setSecret(conf, clusterSecret)
	}
	lc, err := StartLocalCluster(ctx, LocalClusterConfig{Secret: clusterSecret, Workers: m.Workers, WorkerCores: m.WorkerCores, WorkerMemoryMB: m.WorkerMemoryMB,
		AMNode: Resource{MemoryMB: amMem, Cores: amCores},
		Dir:    conf.Get(KeyLocalClusterDir, ""), Executable: cfg.Executable, NodeExpiry: expiry, Logger: cfg.Logger,
		EnvWhitelist: SplitList(conf.Get(KeyContainerEnvWhitelist, ""))})
	if err != nil {
		return wrapf(err, "cannot start the local cluster")
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := lc.Shutdown(sctx); err != nil {
			cfg.Logger.Warn().Err(err).Msg("local cluster shutdown")
		}
	}()
	conf.SetIfMissing(KeyReportInterval, "200ms")
	if mode == "cluster" && !conf.Contains(KeyWaitAppCompletion) {
		// The embedded cluster lives only as long as this command.
		conf.Set(KeyWaitAppCompletion, "true")
	}
	return runOnRM(ctx, cfg, fn, lc.Address(), mode, true)
}

// runOnRM submits to the resource manager at rm: cluster mode submits the
// AM with the application; client mode runs the driver here and submits an
// AM that only allocates executors.
func runOnRM(ctx context.Context, cfg SubmitConfig, fn AppFunc, rm actor.RpcAddress, mode string, embedded bool) error {
	conf := cfg.Conf
	log := cfg.Logger
	driverMem, err := memoryMB(conf, KeyDriverMemory, "1g")
	if err != nil {
		return err
	}
	driverCores, err := conf.GetInt(KeyDriverCores, 1)
	if err != nil {
		return err
	}
	execMem, err := memoryMB(conf, KeyExecutorMemory, "1g")
	if err != nil {
		return err
	}
	execCores, err := conf.GetInt(KeyExecutorCores, 1)
	if err != nil {
		return err
	}
	reportInterval, err := conf.GetDuration(KeyReportInterval, "1s", time.Millisecond)
	if err != nil {
		return err
	}
	host := conf.Get("spark.driver.host", localHostFor(rm))
	// Every failure of the submitting env's connection comes back as an
	// error of the call that needed it: its warnings would only come
	// before that error (they are kept at debug level).
	quiet := quietLogger(log)
	var net, clientNet Network = TCPNetwork{BindHost: conf.Get("spark.driver.bindAddress", host), AdvertiseHost: host, Logger: &log},
		TCPNetwork{Logger: &quiet}
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
	defer shutdownEnv(cenv, log)
	client := NewClient(cenv, rm)
	appKeys := NewAppKeys()
	appSecret, net, err := useAppSecret(conf, net, appKeys)
	if err != nil {
		return err
	}
	acls, err := ACLsFromConf(conf)
	if err != nil {
		return err
	}
	printer := &reportPrinter{w: cfg.Stderr, tty: isTerminal(cfg.Stderr), hideLogs: embedded && !conf.Contains(KeyLocalClusterDir)}
	sub := Submission{Name: conf.Get(KeyAppName, cfg.Class), Queue: conf.Get(KeyQueue, "default"),
		ExecutorResource: Resource{MemoryMB: execMem, Cores: execCores}, ReportInterval: reportInterval,
		AppSecret: appSecret, ACLs: acls}
	if !embedded {
		checkCapacity(ctx, cfg.Stderr, client, conf, mode, sub.ExecutorResource)
	}

	if mode == "cluster" {
		sub.AMResource = Resource{MemoryMB: driverMem, Cores: driverCores}
		sub.AMCommand = append([]string{"sparkrpc", "applicationmaster", "--class", cfg.Class, "--rm", rm.HostPort(), "--"}, cfg.Args...)
		sub.Conf = conf.All()
		h, err := client.Submit(ctx, sub)
		if err != nil {
			return err
		}
		fmt.Fprintf(cfg.Stderr, "Submitted application %s\n", h.AppID())
		if cfg.OnSubmitted != nil {
			cfg.OnSubmitted(h)
		}
		wait, err := conf.GetBool(KeyWaitAppCompletion, true)
		if err != nil {
			return err
		}
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
	printer.noTasks = true
	return runClientMode(ctx, cfg, fn, client, sub, net, printer, appKeys)
}

// useAppSecret, with spark.authenticate on, generates the application's
// secret and puts it in conf in place of the keys that gave the cluster's,
// and has a TCP network accept the application's key ids from appKeys (a
// client-mode AM dials the driver with its application id). The driver's
// UI, which takes the application's secret, is given a verifier of the
// cluster's (webui.KeyUISecretVerifier), so that the user who submitted
// can open it with the secret they have. It returns the application's
// secret (nil with authentication off) and the network to use.
func useAppSecret(conf *actor.Conf, net Network, appKeys *AppKeys) ([]byte, Network, error) {
	if !authOn(conf) {
		return nil, net, nil
	}
	appSecret, err := GenerateSecret()
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
	setSecret(conf, appSecret)
	if tn, ok := net.(TCPNetwork); ok {
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
