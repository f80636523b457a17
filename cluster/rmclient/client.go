package rmclient

// This file holds the resource manager's client: new applications,
// submission, reports and kills.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// Client talks to a resource manager on behalf of a user: it creates and
// submits applications, reports on them and kills them (YARN's YarnClient).
type Client struct {
	env  *actor.Env
	rm   *actor.Ref
	user string
}

// Address returns the resource manager's address.
func (c *Client) Address() actor.RpcAddress { return c.rm.Address() }

// New returns a client of the resource manager listening at rm. env
// may be in client mode. It acts as the current user: SPARK_USER when set,
// else the process's (os/user), as Spark does.
func New(env *actor.Env, rm actor.RpcAddress) *Client {
	return &Client{env: env, rm: env.RemoteRef(rm, cluster.ResourceManagerEndpointName), user: cluster.CurrentUser()}
}

// AsUser returns a client like c that names user as the requesting user of
// kills and log reads, and as the owner of what it submits. Without
// Kerberos the resource manager and node managers take this claim as it
// is (as YARN's simple authentication does): the applications' ACLs
// (spark.acls.enable) guard against mistakes of users who share the
// cluster's secret, not against a user who lies.
func (c *Client) AsUser(user string) *Client {
	out := *c
	out.user = user
	return &out
}

// User returns the user the client acts as.
func (c *Client) User() string { return c.user }

// AppReport is a snapshot of an application as the resource manager sees it.
type AppReport struct {
	ID, Name, Queue, User string
	State                 cluster.AppState
	FinalStatus           cluster.FinalStatus
	Diagnostics           string
	// AMHost and DriverURL are set once the application master registered.
	AMHost, DriverURL string
	// TrackingURL is the driver's web UI (http://host:port) that the
	// application master registered; empty when the driver serves none.
	TrackingURL   string
	Start, Finish time.Time
	// Task progress, as last reported by the application master.
	TasksTotal, TasksDone, TasksRunning int
	// RunningContainers counts the executor containers.
	RunningContainers int
	// AMContainerID and AMLogDir ("node:folder") locate the AM's logs.
	AMContainerID, AMLogDir string

	// AM is the application master's endpoint, once it has registered.
	AM *messages.EndpointRef
}

func reportFromProto(r *messages.RmApplicationReport) *AppReport {
	out := &AppReport{ID: r.GetAppId(), Name: r.GetName(), Queue: r.GetQueue(), User: r.GetUser(),
		State: cluster.AppState(r.GetState()), FinalStatus: cluster.FinalStatus(r.GetFinalStatus()), Diagnostics: r.GetDiagnostics(),
		AMHost: r.GetAmHost(), DriverURL: r.GetDriverUrl(), TrackingURL: r.GetTrackingUrl(), Start: time.UnixMilli(r.GetStartTimeMs()),
		TasksTotal: int(r.GetTasksTotal()), TasksDone: int(r.GetTasksDone()), TasksRunning: int(r.GetTasksRunning()),
		RunningContainers: int(r.GetRunningContainers()), AMContainerID: r.GetAmContainerId(), AMLogDir: r.GetAmLogDir(), AM: r.GetAm()}
	if r.GetFinishTimeMs() != 0 {
		out.Finish = time.UnixMilli(r.GetFinishTimeMs())
	}
	return out
}

// String formats the report the way spark-submit's --status prints it.
func (r *AppReport) String() string {
	diag := r.Diagnostics
	if diag == "" {
		diag = "N/A"
	}
	host := r.AMHost
	if host == "" {
		host = "N/A"
	}
	tracking := r.TrackingURL
	if tracking == "" {
		tracking = "N/A"
	}
	s := fmt.Sprintf("\t client token: N/A\n\t diagnostics: %s\n\t ApplicationMaster host: %s\n\t queue: %s\n\t start time: %d\n\t final status: %s\n\t tracking URL: %s\n\t user: %s\n\t state: %s",
		diag, host, r.Queue, r.Start.UnixMilli(), r.FinalStatus, tracking, r.User, r.State)
	if r.DriverURL != "" {
		s += "\n\t driver: " + r.DriverURL
	}
	if r.AMLogDir != "" {
		s += "\n\t AM logs: " + r.AMLogDir
	}
	return s
}

// NewApplication asks for a new application id and the largest container
// the cluster can give. The client's user (and env) created it: only they
// may stage its resources (Stage).
func (c *Client) NewApplication(ctx context.Context) (string, cluster.Resource, error) {
	r, err := actor.AskAs[*messages.RmNewApplicationResponse](ctx, c.rm, &messages.RmNewApplication{User: c.user})
	if err != nil {
		hint := ""
		if errors.Is(err, syscall.ECONNREFUSED) {
			hint = " (is 'sparkrpc resourcemanager' running there?)"
		}
		return "", cluster.Resource{}, cluster.Wrapf(err, "cannot reach the resource manager at %s%s", c.rm.Address().HostPort(), hint)
	}
	return r.GetAppId(), cluster.ResourceFromProto(r.GetMaxResource()), nil
}

// Report returns the application's report.
func (c *Client) Report(ctx context.Context, appID string) (*AppReport, error) {
	r, err := actor.AskAs[*messages.RmApplicationReport](ctx, c.rm, &messages.RmGetApplicationReport{AppId: appID})
	if err != nil {
		return nil, err
	}
	return reportFromProto(r), nil
}

// Kill kills the application and all its containers. Killing an
// application that already ended is not an error; it reports false.
func (c *Client) Kill(ctx context.Context, appID, diagnostics string) (bool, error) {
	r, err := actor.AskAs[*messages.RmKillApplicationResponse](ctx, c.rm, &messages.RmKillApplication{AppId: appID, Diagnostics: diagnostics, User: c.user})
	if err != nil {
		return false, err
	}
	return r.GetKilled(), nil
}

// ReportProgress tells the resource manager the task progress of the
// application's driver when it runs here (client mode), for the
// application's report. It does not wait for an answer.
func (c *Client) ReportProgress(appID string, total, done, running int) error {
	// An ask, so that the resource manager knows who reports; its answer
	// does not matter.
	f := c.rm.Ask(context.Background(), &messages.RmTaskProgress{AppId: appID, TasksTotal: int32(total), TasksDone: int32(done), TasksRunning: int32(running)})
	go func() { _, _ = f.Result() }()
	return nil
}

// Nodes returns the nodes the resource manager knows.
func (c *Client) Nodes(ctx context.Context) ([]*messages.RmNodeReport, error) {
	r, err := actor.AskAs[*messages.RmClusterNodes](ctx, c.rm, &messages.RmGetClusterNodes{})
	if err != nil {
		return nil, err
	}
	return r.GetNodes(), nil
}

// Submission describes an application to submit.
type Submission struct {
	// Name and Queue of the application (Queue defaults to "default").
	Name, Queue string
	// User is the submitting user (default: the current user).
	User string
	// AMResource is the application master's container.
	AMResource cluster.Resource
	// ExecutorResource, when set, is checked against the largest node too.
	ExecutorResource cluster.Resource
	// AMCommand starts the application master; "sparkrpc" as its first word
	// is the node manager's own executable.
	AMCommand []string
	// AMEnv is added to the AM's environment.
	AMEnv map[string]string
	// Conf is the application's configuration, staged by the resource
	// manager and written to the AM's working folder.
	Conf map[string]string
	// UnmanagedDriver is true in client mode (the driver runs in the
	// submitting process).
	UnmanagedDriver bool
	// AppSecret is the application's secret (GenerateSecret) when
	// spark.authenticate is on: the resource manager keeps it in memory and
	// hands it to the application's containers on a pipe. Conf must not
	// hold it.
	AppSecret []byte
	// ACLs are the application's access-control lists (ACLsFromConf).
	ACLs cluster.ACLs
	// Program is the path of the user's program (the primary resource),
	// staged as cluster.AppResourceName: every container of the
	// application runs it for a command's first word "sparkrpc". Empty:
	// the node managers' own executable.
	Program string
	// Files are local files (--files) staged under their base names, which
	// must differ, and placed in the working folder of every container of
	// the application.
	Files []string
	// ReportInterval is how often the handle polls the report (default 1s,
	// spark.yarn.report.interval).
	ReportInterval time.Duration
}

// Submit creates an application, checks that its AM (and executors) fit
// the largest node, stages its program and files (Stage), and submits it
// naming them. The returned handle watches it. Files that would have one
// name fail with a *cluster.DuplicateResourceError before anything is
// sent. Once the application is created, a submission that fails kills it
// (killAbandoned), which removes what was staged: a submission that
// returned an error leaves no application NEW, nor one running that nobody
// follows.
func (c *Client) Submit(ctx context.Context, s Submission) (*AppHandle, error) {
	resources, err := Resources(s.Program, s.Files)
	if err != nil {
		return nil, err
	}
	if s.User == "" {
		s.User = c.user
	}
	creator := c.AsUser(s.User)
	id, maxRes, err := creator.NewApplication(ctx)
	if err != nil {
		return nil, err
	}
	if err := creator.submit(ctx, id, maxRes, s, resources); err != nil {
		creator.killAbandoned(ctx, id, err)
		return nil, err
	}
	return c.Handle(id, s.ReportInterval), nil
}

// submit checks s against maxRes, the largest node, stages resources and
// submits application id.
func (c *Client) submit(ctx context.Context, id string, maxRes cluster.Resource, s Submission, resources []Resource) error {
	if maxRes == (cluster.Resource{}) {
		rm := c.rm.Address().HostPort()
		return fmt.Errorf("%w at %s: start one with 'sparkrpc nodemanager --rm %s'", cluster.ErrNoNodeManagers, rm, rm)
	}
	if !s.AMResource.Fits(maxRes) {
		return &cluster.ResourceTooLargeError{What: "AM", Requested: s.AMResource, Max: maxRes}
	}
	if s.ExecutorResource != (cluster.Resource{}) && !s.ExecutorResource.Fits(maxRes) {
		return &cluster.ResourceTooLargeError{What: "executor", Requested: s.ExecutorResource, Max: maxRes}
	}
	staged, err := c.stageAll(ctx, id, resources)
	if err != nil {
		return err
	}
	req := &messages.RmSubmitApplication{AppId: id, Name: s.Name, Queue: s.Queue, User: s.User,
		AmResource: s.AMResource.Proto(), AmLaunchContext: &messages.RmLaunchContext{Command: s.AMCommand, Environment: s.AMEnv, Resources: staged},
		Conf: cluster.WithoutSecrets(s.Conf), UnmanagedDriver: s.UnmanagedDriver, AppSecret: s.AppSecret, Acls: s.ACLs.Proto()}
	if _, err := actor.AskAs[*messages.RmSubmitApplicationResponse](ctx, c.rm, req); err != nil {
		return cluster.Wrapf(err, "submission of %s failed", id)
	}
	return nil
}

// killAbandonedTimeout bounds the kill of an application whose submission
// failed, which may come after the submission's ctx ended.
const killAbandonedTimeout = 10 * time.Second

// killAbandoned kills application id, whose submission failed with err:
// one the resource manager refused stays NEW, and one whose answer did not
// come in time may be running with nobody to follow it.
func (c *Client) killAbandoned(ctx context.Context, id string, err error) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killAbandonedTimeout)
	defer cancel()
	_, _ = c.Kill(kctx, id, "Application killed: its submission failed: "+err.Error())
}

// AppListener is told about an application's changes (Spark's
// SparkAppHandle.Listener). Calls come from the goroutine running
// AppHandle.Wait, one at a time.
type AppListener interface {
	// StateChanged is called when the state or final status changed.
	StateChanged(r *AppReport)
	// InfoChanged is called when other information (task progress, the
	// driver's URL) changed.
	InfoChanged(r *AppReport)
}

// AppHandle watches a submitted application (Spark's SparkAppHandle).
type AppHandle struct {
	c        *Client
	id       string
	interval time.Duration

	mu        sync.Mutex
	last      *AppReport
	listeners []AppListener
}

// Handle returns a handle on an existing application.
func (c *Client) Handle(appID string, reportInterval time.Duration) *AppHandle {
	if reportInterval <= 0 {
		reportInterval = time.Second
	}
	return &AppHandle{c: c, id: appID, interval: reportInterval}
}

// AppID returns the application's id.
func (h *AppHandle) AppID() string { return h.id }

// AddListener adds a listener; it is told about the changes seen from now on.
func (h *AppHandle) AddListener(l AppListener) {
	h.mu.Lock()
	h.listeners = append(h.listeners, l)
	h.mu.Unlock()
}

// Last returns the last report seen, or nil.
func (h *AppHandle) Last() *AppReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// State returns the last state seen (NEW before the first report).
func (h *AppHandle) State() cluster.AppState {
	if r := h.Last(); r != nil {
		return r.State
	}
	return cluster.StateNew
}

// Kill kills the application.
func (h *AppHandle) Kill(ctx context.Context) error {
	_, err := h.c.Kill(ctx, h.id, "")
	return err
}

// Poll fetches the report once and tells the listeners what changed.
func (h *AppHandle) Poll(ctx context.Context) (*AppReport, error) {
	r, err := h.c.Report(ctx, h.id)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	prev := h.last
	h.last = r
	ls := append([]AppListener(nil), h.listeners...)
	h.mu.Unlock()
	stateChanged := prev == nil || prev.State != r.State || prev.FinalStatus != r.FinalStatus
	infoChanged := prev != nil && (prev.TasksDone != r.TasksDone || prev.TasksTotal != r.TasksTotal ||
		prev.TasksRunning != r.TasksRunning || prev.DriverURL != r.DriverURL || prev.RunningContainers != r.RunningContainers)
	for _, l := range ls {
		if stateChanged {
			l.StateChanged(r)
		} else if infoChanged {
			l.InfoChanged(r)
		}
	}
	return r, nil
}

// WaitFor polls until cond holds for the report, the application ends, or
// ctx ends, and returns the last report.
func (h *AppHandle) WaitFor(ctx context.Context, cond func(*AppReport) bool) (*AppReport, error) {
	t := time.NewTicker(h.interval)
	defer t.Stop()
	failures := 0
	for {
		r, err := h.Poll(ctx)
		if err != nil {
			if cluster.RemoteIs(err, cluster.ErrUnknownAppID) || ctx.Err() != nil {
				return nil, err
			}
			failures++
			if failures >= 5 {
				return nil, cluster.Wrapf(err, "lost contact with the resource manager")
			}
		} else {
			failures = 0
			if cond(r) || r.State.Terminal() {
				return r, nil
			}
		}
		select {
		case <-ctx.Done():
			return h.Last(), context.Cause(ctx)
		case <-t.C:
		}
	}
}

// Wait polls until the application ends and returns its final report. The
// error is an *AppFailedError unless the final status is SUCCEEDED.
func (h *AppHandle) Wait(ctx context.Context) (*AppReport, error) {
	r, err := h.WaitFor(ctx, func(*AppReport) bool { return false })
	if err != nil {
		return r, err
	}
	return r, r.Err()
}

// Err returns nil for a report with final status SUCCEEDED, else an
// *AppFailedError.
func (r *AppReport) Err() error {
	if r.State == cluster.StateFinished && r.FinalStatus == cluster.FinalSucceeded {
		return nil
	}
	return &cluster.AppFailedError{AppID: r.ID, State: r.State, FinalStatus: r.FinalStatus, Diagnostics: r.Diagnostics}
}

// ExitedError is the error of a client-mode driver whose application the
// resource manager ended under it (Spark's client-mode "YARN application
// has exited unexpectedly"): it matches cluster.ErrAppFailed.
func (r *AppReport) ExitedError() error {
	return fmt.Errorf("%w: YARN application has exited unexpectedly with state %s! Diagnostics: %s",
		cluster.ErrAppFailed, r.State, r.Diagnostics)
}

// Applications returns the reports of the applications the resource
// manager knows whose state is one of states (every state when none is
// given), in submission order (YARN's getApplications).
func (c *Client) Applications(ctx context.Context, states ...cluster.AppState) ([]*AppReport, error) {
	req := &messages.RmGetApplications{}
	for _, s := range states {
		req.States = append(req.States, messages.RmAppState(s))
	}
	r, err := actor.AskAs[*messages.RmApplications](ctx, c.rm, req)
	if err != nil {
		return nil, err
	}
	out := make([]*AppReport, 0, len(r.GetApps()))
	for _, a := range r.GetApps() {
		out = append(out, reportFromProto(a))
	}
	return out, nil
}
