// Package webui serves sparkrpc's web pages and REST API: the driver's UI
// (Spark's UI on port 4040), the resource manager's (YARN's on 8088), a
// node manager's (8042) and a history server's (Spark's on 18080). Pages are rendered on the server with
// html/template from embedded files; a few lines of plain JavaScript
// refresh them every two seconds. The JSON API answers every error with
// {"error": "...", "status": N}.
//
// # Handlers
//
// NewDriverUI, NewApplicationUI, NewResourceManagerUI,
// NewNodeManagerUI and NewHistoryServerUI return http.Handlers; Start serves one with Spark's
// port retries, and StartDriverUI starts the driver's from its
// configuration. Every UI serves /metrics from the handler given with
// WithMetrics (404 without).
//
// # An application's store and pages
//
// An AppStore is an endpoints.Listener that records what an
// application's pages show from its events alone: ApplicationStart,
// EnvironmentUpdate, ApplicationEnd, executors, jobs and task attempts
// (Spark's AppStatusListener and AppStatusStore). NewApplicationUI serves
// the pages and REST API of a store alone; a history server replays an
// event log into a store and mounts its UI under /history/{appId} with
// http.StripPrefix and WithBasePath, which starts every link with the
// base (Spark's spark.ui.proxyBase). The driver's UI (NewDriverUI) is the
// same pages over a store the driver feeds, plus what only a live driver
// has: the endpoints page, heartbeats, dynamic allocation and its
// configuration before an EnvironmentUpdate arrives; the pages needing a
// live driver are left out of the navigation without one. It reads the
// env through snapshots (actor.Env.EndpointStats,
// endpoints.Driver.LastHeartbeats): rendering a page, or a client slow to
// read it, never holds a lock the scheduler takes.
//
// Pages (the application's):
//
//	/jobs/                 the jobs, with an event timeline (SVG): executors added and removed,
//	                       the newest 500 jobs as bars; running jobs' duration is the time elapsed
//	/jobs/job/?id=N        a job (sparkrpc's one stage): its summary, a timeline of its first 1000
//	                       tasks per executor, and its task attempts sorted and paged on the server
//	                       with Spark's parameters task.sort (a column's name: Index, Task ID,
//	                       Attempt, Executor ID, Host, Status, Launch Time, Duration, Run Time,
//	                       Result Size, Errors), task.desc, task.page (from 1), task.pageSize (100,
//	                       at most 1000)
//	/executors/            the driver's row (from ApplicationStart) and the executors, with an
//	                       executor's pod (its KUBERNETES_POD_NAME attribute) and its log links
//	/environment/          the runtime and the properties, redacted
//	/endpoints/            (live only) the driver env's endpoints
//
// A job keeps at most spark.ui.retainedTasks (100000) task attempts; beyond,
// its oldest ended attempts are dropped, a tenth of the limit at least at a
// time (its oldest running ones too when too few have ended: a log of
// starts without ends stays bounded), while its counts keep every attempt
// and its page says how many were dropped. A page copies a job's rows
// under the store's lock and sorts them outside it, so that views never
// hold up the listener bus. Nothing is sized from an event's counts. spark.ui.retainedJobs (1000) and spark.ui.retainedDeadExecutors
// (100) bound ended jobs and removed executors (StoreOptionsFromConf). The resource manager's UI asks its endpoint for reports. With
// WithExecutorAllocation, the driver's executors page shows dynamic
// allocation's target, backlog and idle executors and its last decisions
// with their numbers (allocation.go).
//
// A history server's UI (NewHistoryServerUI over a HistorySource, which
// package history's Provider is) lists the applications of a folder of
// event logs at / (the finished ones; ?showIncomplete=true the running
// ones), serves each one's pages under /history/{appId}/ from its store,
// with what its log could not give shown above every page, and answers
// /api/v1/applications[?status=completed|running] and, for each
// application, every route of its API under /api/v1/applications/{appId}/.
//
// The driver's /flow/ page (flow.go, flowsvg.go) draws the driver's env as
// a graph, in an SVG drawn on the server: its endpoints with their mailbox
// depth and message rate, and the peers its transport talks to
// (actor.Env.PeerStats: executors, the cluster manager) with bytes per
// second each way and bytes queued for them. It reads counters the env
// and transport keep anyway, so a refresh costs a snapshot, and draws at
// most MaxFlowEndpoints endpoints and MaxFlowPeers peers.
//
// # REST API (a documented subset of Spark's /api/v1)
//
//	GET /api/v1/applications                         [ApplicationInfo]
//	GET /api/v1/applications/{id}                    ApplicationInfo
//	GET /api/v1/applications/{id}/executors          [ExecutorSummary], active executors
//	GET /api/v1/applications/{id}/allexecutors       [ExecutorSummary], removed ones too
//	GET /api/v1/applications/{id}/jobs[?status=S]    [JobData]
//	GET /api/v1/applications/{id}/jobs/{jobId}       JobData
//	GET /api/v1/applications/{id}/stages/{jobId}/0/taskList[?offset=&length=&sortBy=]
//	                                                 [TaskData] of job jobId (sparkrpc's stage id is the
//	                                                 job's, its only attempt 0): taskId, index, attempt,
//	                                                 partitionId, launchTime, duration (absent while
//	                                                 running), executorId, host, status (RUNNING, SUCCESS,
//	                                                 FAILED, KILLED, LOST), speculative, errorMessage,
//	                                                 taskMetrics {executorRunTime, resultSize}; offset 0,
//	                                                 length 20 (at most 1000), sortBy ID (task id), runtime,
//	                                                 -runtime, or a task table column, "-" for descending
//	GET /api/v1/applications/{id}/environment        {"runtime": {...}, "sparkProperties": [[key, value], ...]}
//	GET /api/v1/applications/{id}/allocation         (live only) dynamic allocation: {"enabled", "target", "minExecutors",
//	                                                 "maxExecutors", "backlog", "runningTasks", "executors",
//	                                                 "idleExecutors", "decisions": [...]}, newest decision first
//	GET /api/v1/flow                                 sparkrpc's addition, the data of the /flow/ page: {"env",
//	                                                 "address", "messagesDropped", "endpoints": [{"name",
//	                                                 "mailboxDepth", "messagesHandled", "messagesPerSecond",
//	                                                 "count"}], "peers": [{"identity", "executorId",
//	                                                 "clientMode", "sentBytes", "receivedBytes",
//	                                                 "queuedBytes", "sentBytesPerSecond",
//	                                                 "receivedBytesPerSecond", "count"}]}; rates are -1
//	                                                 before the first window; at most MaxFlowEndpoints and
//	                                                 MaxFlowPeers entries, the last one aggregating the rest
//
// The executors lists begin with the driver's row (id "driver") once an
// ApplicationStart gave the driver's host:port. Field names are Spark's (id, hostPort, isActive, totalCores, activeTasks,
// completedTasks, failedTasks, jobId, status, numTasks, numActiveTasks,
// numCompletedTasks, ...); storage, memory and stage figures, which
// sparkrpc does not have, are left out. The resource manager serves
// /api/v1/applications[?state=RUNNING,...], /api/v1/applications/{id} and
// /api/v1/nodes with YARN's field names (id, name, user, queue, state,
// finalStatus, progress, trackingUrl, startedTime, finishedTime, ...); a
// node manager /api/v1/containers.
//
// A node manager's UI with WithContainerLogs serves its containers' logs as
// YARN's does, the URLs its containers get as SPARK_LOG_URL_STDOUT and
// SPARK_LOG_URL_STDERR (and the containers page links):
//
//	GET /node/containerlogs/{containerId}/{user}/{file}[?start=N]
//	                                                 text/plain: a bounded part of the file from byte N
//	                                                 (negative: from the end; default -4096, the last 4 KiB);
//	                                                 headers X-Log-Start and X-Log-Size; 403 for a user
//	                                                 the application's ACLs refuse, 404 for no such log
//
// A driver's UI with WithExecutorLogs serves its executors' logs through the
// reader its cluster manager gives (on Kubernetes, the executor pod's log
// read through the API server; the pod is found among the application's
// own, never named by the request):
//
//	GET /executors/logs/?id=N[&start=N]          text/plain: at most 64 KiB from byte N (negative: from
//	                                             the end; default -4096); 404 for no such executor,
//	                                             502 when the cluster does not give the log
//
// # Configuration
//
//	spark.ui.enabled          true   the driver serves its UI
//	spark.ui.port             4040   the driver UI's first port (0: a free port)
//	spark.port.maxRetries     16     ports tried after a port in use, each move logged
//	spark.authenticate        false  pages, API and /metrics require the secret (else 401)
//	spark.authenticate.secret        the shared secret
//	spark.authenticate.secret.file   a file (mode 0600) or pipe holding it, read when the secret is not set
//	spark.sparkrpc.ui.secretVerifier a verifier (NewSecretVerifier) of a second secret the
//	                                 driver's UI accepts: the cluster's, set by submit
//	spark.driver.appUIAddress        set to the driver UI's URL: the tracking URL
//	spark.redaction.regex     (?i)secret|password|token|access[.]?key
//	                                 conf entries whose key or value it matches are shown
//	                                 as "*********(redacted)"
//
// # Redaction
//
// The driver's environment page (/environment/) and its API list the
// driver's configuration as Spark's do, with the value of every entry
// whose key or value matches spark.redaction.regex replaced by
// "*********(redacted)" (Redact). Whatever the regex says,
// spark.authenticate.secret and any value holding the secret the UI
// requires are hidden too, and a regex that does not compile hides every
// value. No other page or API answer shows configuration values.
//
// # Authentication
//
// With spark.authenticate on, a request must carry the shared secret in
// its Authorization header: scripts and Prometheus send
// "Authorization: Bearer SECRET"; a browser sends HTTP Basic credentials,
// any user name and the secret as the password. A request without them
// gets 401 with the challenges `Basic realm="sparkrpc"` (so a browser asks
// for the credentials, and keeps sending them to that host and port) and
// `Bearer realm="sparkrpc"`; its body is JSON on /api/, an HTML page for a
// browser, text otherwise. The secret is compared in constant time (as
// SHA-256 digests, so its length does not show) and is never taken from
// the URL (query parameters land in access logs and the browser's
// history). Refused credentials are logged at warn level at most once a
// minute, with the client's address, the path, the scheme and how many
// were refused since the last line, never with what was offered; a request
// with no credentials at all, a browser's first, is not logged.
//
// The user name of Basic credentials is kept in the request's context
// (User) and shown in the pages' header; it is claimed, not proven: anyone
// who knows the secret may send any name. There is no login form with a
// session cookie: a cookie is sent to every port of its host, so a cookie
// set by one UI would reach every other web server on that machine,
// another application's UI included, whereas a browser keeps Basic
// credentials for one host and port. Without TLS (the UIs serve plain
// HTTP) the secret crosses the network in the clear with every request,
// as a bearer token or as Basic credentials alike: serve the UIs on a
// trusted network or behind a TLS proxy.
//
// No page changes state: there is no kill action, so spark.ui.killEnabled
// has nothing to allow.
//
// # Files
//
// An application's UI: store.go (AppStore), retention.go (what it
// keeps), tasks.go (a job's task rows, sorted and paged), appui.go
// (ApplicationUI, the routes, WithBasePath), driverui.go (DriverUI,
// AppInfo), jobspage.go, executorspage.go,
// environment.go, timeline.go (the SVG timelines), restapi.go,
// allocation.go, endpointsview.go, executorlogs.go (a driver's executor
// logs), flow.go and flowsvg.go (the message flow). A history server's:
// historyui.go. The cluster's: rmui.go, nmui.go, containerlogs.go.
// Shared: server.go, conf.go, options.go, render.go, auth.go, verifier.go,
// redact.go, errors.go.
package webui
