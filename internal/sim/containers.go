// The node managers' Launcher: a container's program runs in this process,
// as the command line the allocator or the resource manager gave it asks
// (an executor, or the application master in client mode).

package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/appmaster"
	"github.com/sparkrpc/sparkrpc/cluster/nodemanager"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/internal/cli"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// errLaunchFailed is the error of a container launch that a
// launch-failures window makes fail.
var errLaunchFailed = errors.New("sim: injected container launch failure")

// launcher is a node manager's nodemanager.Launcher.
type launcher struct {
	y    *yarnCluster
	host string
}

// Launch implements nodemanager.Launcher: "sparkrpc executor ..." runs
// endpoints.RunExecutor, "sparkrpc applicationmaster --client-mode ..."
// runs appmaster.Run, each on a goroutine of its own.
func (l *launcher) Launch(c nodemanager.ContainerLaunch) (nodemanager.ContainerProcess, error) {
	if len(c.Command) < 2 || c.Command[0] != "sparkrpc" {
		return nil, fmt.Errorf("sim: no such program: %q", c.Command)
	}
	switch c.Command[1] {
	case "executor":
		if l.y.w.launchFails(c.ID) {
			l.y.w.trace.note("container %s: launch fails", c.ID)
			return nil, errLaunchFailed
		}
		return l.y.launchExecutor(c, l.host)
	case "applicationmaster":
		return l.y.launchAM(c)
	}
	return nil, fmt.Errorf("sim: no such program: %q", c.Command[1])
}

// launchFails reports whether the launch of container id fails now; the
// draw depends on the container's id only.
func (w *World) launchFails(id string) bool {
	now := w.now()
	h := fnv.New64a()
	h.Write([]byte(id))
	draw := mix(w.seed^0x1a0c, int(h.Sum64()>>1))
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, b := range w.launchBursts {
		if now >= b.from && now < b.to && float64(draw%1000) < b.prob*1000 {
			return true
		}
	}
	return false
}

// process is a container's program as a nodemanager.ContainerProcess.
type process struct {
	pid    int
	done   chan struct{} // closed once the program has returned
	status int
	signal func(sig syscall.Signal)
}

// Pid implements nodemanager.ContainerProcess.
func (p *process) Pid() int { return p.pid }

// Wait implements nodemanager.ContainerProcess.
func (p *process) Wait() int {
	<-p.done
	return p.status
}

// Signal implements nodemanager.ContainerProcess.
func (p *process) Signal(sig syscall.Signal) error {
	select {
	case <-p.done:
	default:
		p.signal(sig)
	}
	return nil
}

func (y *yarnCluster) newProcess() *process {
	y.mu.Lock()
	y.pids++
	pid := 1000 + y.pids
	y.mu.Unlock()
	return &process{pid: pid, done: make(chan struct{})}
}

// launchExecutor runs an executor container's command: its flags as the
// executor command reads them, its startup conf from its properties file.
func (y *yarnCluster) launchExecutor(c nodemanager.ContainerLaunch, host string) (nodemanager.ContainerProcess, error) {
	a, w := y.a, y.w
	var cfg endpoints.ExecutorConfig
	var props string
	fs := flag.NewFlagSet("executor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.DriverURL, "driver-url", "", "")
	fs.StringVar(&cfg.ExecutorID, "executor-id", "", "")
	fs.StringVar(&cfg.Hostname, "hostname", "", "")
	fs.IntVar(&cfg.Cores, "cores", 0, "")
	fs.StringVar(&cfg.AppID, "app-id", "", "")
	fs.IntVar(&cfg.ResourceProfileID, "resourceProfileId", 0, "")
	fs.StringVar(&props, "properties-file", "", "")
	if err := fs.Parse(c.Command[2:]); err != nil {
		return nil, err
	}
	conf := actor.NewConf()
	if props != "" {
		if err := cli.LoadPropertiesFile(conf, filepath.Join(c.WorkDir, props)); err != nil {
			return nil, err
		}
	}
	cfg.FilesDir = c.WorkDir
	id := cfg.ExecutorID
	ex := &executor{id: id, host: host, container: c.ID}
	a.mu.Lock()
	if _, dup := a.executors[id]; dup {
		a.mu.Unlock()
		return nil, fmt.Errorf("sim: executor %s started twice", id)
	}
	a.executors[id] = ex
	a.started++
	a.mu.Unlock()
	w.trace.note("container %s: executor %s starts on %s", c.ID, id, host)
	p := y.newProcess()
	p.signal = func(sig syscall.Signal) {
		if sig == sigTerm {
			w.trace.note("container %s: SIGTERM", c.ID)
			a.mu.Lock()
			cancel := ex.cancel
			a.mu.Unlock()
			cancel()
			return
		}
		w.request("kill container "+c.ID, func() {
			a.mu.Lock()
			gone := ex.exited || ex.killed
			a.mu.Unlock()
			if !gone {
				w.trace.add("container %s: SIGKILL", c.ID)
				w.kill(ex)
			}
		})
	}
	a.runExecutor(ex, cfg, []endpoints.ExecutorOption{endpoints.WithExecutorConf(conf)}, "executor "+padID(id), func(err error) {
		a.exited(ex, err)
		a.mu.Lock()
		killed := ex.killed
		a.mu.Unlock()
		p.status = exitStatus(killed, err)
		close(p.done)
	})
	return p, nil
}

// exitStatus is the status of an executor's process: SIGKILL's when it
// was killed, else the exit code the executor command gives its error.
func exitStatus(killed bool, err error) int {
	var ee *endpoints.ExitError
	switch {
	case killed:
		return cluster.ExitSignalBase + int(sigKill)
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.Code
	}
	return 1
}

// padID pads a number so that ids sort as numbers.
func padID(id string) string { return fmt.Sprintf("%12s", id) }

// byNumber orders ids that are numbers as numbers.
func byNumber(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// launchAM runs the application master's container: appmaster.Run in
// client mode, with its conf from the staged file in its working folder
// and its envs on the simulated network, on the AM's host. A signal, TERM
// or KILL, ends its ctx: goroutines cannot be killed.
func (y *yarnCluster) launchAM(c nodemanager.ContainerLaunch) (nodemanager.ContainerProcess, error) {
	w := y.w
	var rm, driverURL string
	var clientMode bool
	fs := flag.NewFlagSet("applicationmaster", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&rm, "rm", "", "")
	fs.StringVar(&driverURL, "driver-url", "", "")
	fs.BoolVar(&clientMode, "client-mode", false, "")
	if err := fs.Parse(c.Command[2:]); err != nil {
		return nil, err
	}
	rmAddr, err := actor.ParseHostPort(rm)
	if err != nil {
		return nil, err
	}
	if !clientMode {
		return nil, errors.New("sim: only a client-mode application master runs here")
	}
	conf := actor.NewConf()
	if err := cli.LoadPropertiesFile(conf, filepath.Join(c.WorkDir, cluster.StagingConfFile)); err != nil {
		return nil, err
	}
	env := envOf(c.Env)
	ctx, cancel := context.WithCancel(context.Background())
	p := y.newProcess()
	p.signal = func(sig syscall.Signal) {
		w.trace.note("container %s: signal %d", c.ID, sig)
		cancel()
	}
	y.mu.Lock()
	y.amProc = p
	y.mu.Unlock()
	w.trace.note("container %s: application master starts", c.ID)
	y.a.wg.Add(1)
	go func() {
		defer y.a.wg.Done()
		defer cancel()
		err := appmaster.Run(ctx, appmaster.Config{AppID: env["SPARKRPC_APP_ID"], ContainerID: env["CONTAINER_ID"],
			ResourceManager: rmAddr, ClientMode: true, DriverURL: driverURL, Conf: conf, Network: amNetwork{y}, Logger: zerolog.Nop()})
		w.request("application master", func() {
			y.amExited(err)
			var ee *cluster.AMExitError
			switch {
			case err == nil:
				p.status = 0
			case errors.As(err, &ee):
				p.status = ee.Code
			default:
				p.status = 1
			}
			close(p.done)
		})
	}()
	return p, nil
}

// amNetwork is the application master's cluster.Network: its envs listen
// on the AM's host of the simulated network.
type amNetwork struct{ y *yarnCluster }

// Listen implements cluster.Network.
func (n amNetwork) Listen(name string, conf *actor.Conf, port int) (*actor.Env, error) {
	y := n.y
	y.mu.Lock()
	if port == 0 {
		y.amPorts++
		port = 40000 + y.amPorts
	}
	y.mu.Unlock()
	env, err := actor.NewEnv(name, conf, actor.WithTransport(y.w.net.transport(amHost, port)), actor.WithLogger(zerolog.Nop()))
	if err == nil {
		y.mu.Lock()
		y.amEnv = env
		y.mu.Unlock()
	}
	return env, err
}

// Client implements cluster.Network.
func (n amNetwork) Client(name string, conf *actor.Conf) (*actor.Env, error) {
	return nil, errors.New("sim: the application master has no client env")
}

// envOf maps a container's KEY=VALUE environment.
func envOf(kvs []string) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
