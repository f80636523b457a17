package endpoints

// This file holds executor registration: the driver's record of each executor,
// RegisterExecutor and LaunchedExecutor, and the queries and waits on the
// registered executors.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/messages"
)

// ExecutorInfo describes a registered executor.
type ExecutorInfo struct {
	ID      string
	Host    string           // the host it registered with
	Address actor.RpcAddress // its env's address, as the driver sees it
	// TotalCores is what the executor registered with; FreeCores what no
	// task holds (0 until the executor said it is ready, see Ready).
	TotalCores int
	FreeCores  int
	// Ready is true once the executor sent LaunchedExecutor: it gets tasks.
	Ready bool
	// Decommissioning is true once the executor said it is leaving: it
	// gets no new tasks.
	Decommissioning  bool
	RegistrationTime time.Time
	// LogURLs are those it registered with, or those built from
	// spark.ui.custom.executor.log.url (see ExecutorLogURLs); Attributes
	// are those it registered with.
	LogURLs    map[string]string
	Attributes map[string]string
	// Identity is the executor's env as the driver's transport knows it:
	// its "host:port", or the client id of an env in client mode (what
	// actor.Env.PeerStats lists).
	Identity string
}

// executorData is the driver's record of an executor (Spark's
// ExecutorData). Guarded by Driver.mu.
type executorData struct {
	id              string
	ref             *actor.Ref
	addr            actor.RpcAddress
	identity        string // see ExecutorInfo.Identity
	host            string
	totalCores      int
	freeCores       int
	ready           bool
	decommissioning bool
	pendingLoss     bool // disconnected; waiting for the cluster manager's loss reason
	stopAsked       bool // sent StopExecutor: its disconnect is expected
	killing         bool // its host's executors are being killed (Spark's executorsPendingToRemove)
	registered      time.Time
	idleSince       time.Time // when it last became ready with no task running
	logURLs         map[string]string
	attributes      map[string]string
}

// active reports whether the executor gets tasks: ready, and alive.
func (ex *executorData) active() bool { return ex.ready && ex.alive() }

// alive reports whether the executor is neither decommissioning, waiting
// for its loss reason, nor being killed (Spark's isExecutorActive).
func (ex *executorData) alive() bool { return !ex.decommissioning && !ex.pendingLoss && !ex.killing }

func (ex *executorData) info() ExecutorInfo {
	return ExecutorInfo{ID: ex.id, Host: ex.host, Address: ex.addr, TotalCores: ex.totalCores, FreeCores: ex.freeCores,
		Ready: ex.ready, Decommissioning: ex.decommissioning, RegistrationTime: ex.registered,
		LogURLs: maps.Clone(ex.logURLs), Attributes: maps.Clone(ex.attributes), Identity: ex.identity}
}

// Executors returns the registered executors, sorted by id.
func (d *Driver) Executors() []ExecutorInfo {
	d.mu.Lock()
	out := make([]ExecutorInfo, 0, len(d.executors))
	for _, ex := range d.executors {
		out = append(out, ex.info())
	}
	d.mu.Unlock()
	slices.SortFunc(out, func(a, b ExecutorInfo) int {
		if len(a.ID) != len(b.ID) {
			return len(a.ID) - len(b.ID)
		}
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out
}

// TotalCores returns the cores of every registered executor.
func (d *Driver) TotalCores() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.totalCores
}

// WaitForExecutors waits until at least n executors are ready for tasks
// (registered and launched), or ctx ends.
func (d *Driver) WaitForExecutors(ctx context.Context, n int) error {
	for {
		d.mu.Lock()
		ready := 0
		for _, ex := range d.executors {
			if ex.ready && !ex.pendingLoss {
				ready++
			}
		}
		ch := d.changed
		d.mu.Unlock()
		if ready >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d executors (%d ready): %w", n, ready, context.Cause(ctx))
		}
	}
}

// WaitForExecutorsGone waits until none of ids is registered, or ctx ends.
func (d *Driver) WaitForExecutorsGone(ctx context.Context, ids ...string) error {
	for {
		d.mu.Lock()
		left := 0
		for _, id := range ids {
			if d.executors[id] != nil {
				left++
			}
		}
		ch := d.changed
		d.mu.Unlock()
		if left == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d executors to go: %w", left, context.Cause(ctx))
		}
	}
}

// register records a registering executor, or refuses it with a
// *registrationError: a duplicate id, an excluded host, a registration
// that cannot be one (checkRegistration), or a driver that is stopping.
func (d *Driver) register(cc *actor.CallContext, m *messages.RegisterExecutor) (*messages.BoolReply, error) {
	id, host := m.GetExecutorId(), m.GetHostname()
	refuse := func(kind error, text string) error {
		d.log.Warn().Str("executor", id).Str("host", host).Msg(text)
		return &registrationError{kind: kind, text: text}
	}
	ref, err := d.env.RefFromProto(m.GetExecutorRef())
	if err != nil {
		return nil, fmt.Errorf("registering executor %s: %w", id, err)
	}
	if text := d.checkRegistration(cc, m, ref); text != "" {
		return nil, refuse(ErrInvalidRegistration, text)
	}
	addr := ref.Address()
	if addr.IsZero() {
		addr = cc.SenderAddress()
	}
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return nil, refuse(ErrDriverStopped, "Driver is stopping: executor "+id+" not registered")
	}
	if _, dup := d.executors[id]; dup {
		d.mu.Unlock()
		return nil, refuse(ErrDuplicateExecutor, "Duplicate executor ID: "+id)
	}
	if d.excluded[host] {
		d.mu.Unlock()
		return nil, refuse(ErrExecutorExcluded, "Executor is excluded due to failures: "+id)
	}
	identity := cc.SenderIdentity()
	if identity == "" {
		identity = addr.HostPort()
	}
	ex := &executorData{id: id, ref: ref, addr: addr, identity: identity, host: host, totalCores: int(m.GetCores()),
		registered: time.Now(), attributes: m.GetAttributes(),
		logURLs: executorLogURLs(d.log, d.logURLPattern, id, m.GetLogUrls(), m.GetAttributes())}
	d.executors[id] = ex
	d.metrics.registered.Inc()
	d.totalCores += ex.totalCores
	d.notifyChanged()
	if d.bus.wanted() {
		d.bus.post(ExecutorAdded{Time: ex.registered, ExecutorID: id, Host: host, Address: addr, Cores: ex.totalCores,
			LogURLs: maps.Clone(ex.logURLs), Attributes: maps.Clone(ex.attributes)})
	}
	d.mu.Unlock()
	d.log.Info().Str("executor", id).Str("host", host).Str("address", addr.String()).Int("cores", ex.totalCores).
		Msg("Registered executor")
	_ = d.hbRef.Send(&messages.ExecutorRegistered{ExecutorId: id})
	return &messages.BoolReply{Value: true}, nil
}

// checkRegistration returns why m, asked through cc, cannot register an
// executor, or "". The driver sends the executor's tasks and orders to the
// reference it registers with, so that reference must be an endpoint of
// the asker's own env (the one its connection authenticated), and not one
// of the driver's: a reference a peer writes must not make the driver
// send, or dial, anywhere else.
func (d *Driver) checkRegistration(cc *actor.CallContext, m *messages.RegisterExecutor, ref *actor.Ref) string {
	id := m.GetExecutorId()
	switch {
	case id == "":
		return "Executor registered with an empty ID"
	case len(id) > maxExecutorIDLen:
		return fmt.Sprintf("Executor ID of %d bytes, over %d", len(id), maxExecutorIDLen)
	case m.GetCores() < 1:
		return fmt.Sprintf("Executor %s registered with %d cores", id, m.GetCores())
	}
	env := ref.PID().Address
	switch asker := cc.SenderIdentity(); {
	case asker != "" && env != asker:
		return fmt.Sprintf("Executor %s registered with the reference %s, which is not on its own env", id, ref)
	case asker == "" && (env != d.env.Identity() || ref.Name() == DriverEndpointName || ref.Name() == HeartbeatEndpointName):
		return fmt.Sprintf("Executor %s registered with the reference %s, which is not an executor's", id, ref)
	}
	return ""
}

// askerIs returns nil when cc, an ask about executor id, comes from this
// env, from the env executor id registered from, or names no executor
// registered (there is nothing to act on), and an error that matches
// ErrNotTheExecutor otherwise: an executor speaks for itself only.
func (d *Driver) askerIs(cc *actor.CallContext, id string) error {
	asker := cc.SenderIdentity()
	if asker == "" {
		return nil
	}
	d.mu.Lock()
	ex := d.executors[id]
	d.mu.Unlock()
	if ex == nil || ex.from(asker) {
		return nil
	}
	return fmt.Errorf("%w: %s asked about executor %q", ErrNotTheExecutor, asker, id)
}

// from reports whether a message from the env peer ("" for the driver's
// own) may speak for ex: it comes from the driver or from the env ex
// registered from.
func (ex *executorData) from(peer string) bool { return peer == "" || peer == ex.identity }

// maxExecutorIDLen bounds an executor id: ids are metric labels, log
// fields and keys of the driver's maps.
const maxExecutorIDLen = 256

// launched makes executor id ready for tasks, on its LaunchedExecutor from
// the env peer ("" for this one), which must be the one it registered from.
func (d *Driver) launched(id, peer string) {
	var out offerResult
	d.mu.Lock()
	ex := d.executors[id]
	if ex != nil && !ex.from(peer) {
		d.mu.Unlock()
		d.log.Warn().Str("executor", id).Str("from", peer).Msg("LaunchedExecutor from another env than the executor's: ignored")
		return
	}
	if ex != nil && !ex.ready {
		ex.ready = true
		ex.freeCores = ex.totalCores
		ex.idleSince = time.Now()
		d.notifyChanged()
		d.makeOffers(ex, &out)
		d.publish(&out)
	}
	d.unlockAndSend(out.launches, out.kills)
	if ex == nil {
		d.log.Warn().Str("executor", id).Msg("LaunchedExecutor from an unknown executor")
	}
}
