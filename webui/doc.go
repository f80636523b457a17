// Package webui serves sparkrpc's web pages and REST API: the driver's UI
// (Spark's UI on port 4040), the resource manager's (YARN's on 8088) and a
// node manager's (8042). Pages are rendered on the server with
// html/template from embedded files; a few lines of plain JavaScript
// refresh them every two seconds. The JSON API answers every error with
// {"error": "...", "status": N}.
//
// # Handlers
//
// NewDriverUI, NewResourceManagerUI and NewNodeManagerUI return
// http.Handlers; Start serves one with Spark's port retries, and
// StartDriverUI starts the driver's from its configuration. Every UI
// serves /metrics from the handler given with WithMetrics (404 without).
//
// The driver's UI keeps its own record of executors and jobs from the
// driver's listener events and reads the env through snapshots
// (actor.Env.EndpointStats, endpoints.Driver.LastHeartbeats): rendering a
// page, or a client slow to read it, never holds a lock the scheduler
// takes. The resource manager's UI asks its endpoint for reports.
//
// # REST API (a documented subset of Spark's /api/v1)
//
//	GET /api/v1/applications                         [ApplicationInfo]
//	GET /api/v1/applications/{id}                    ApplicationInfo
//	GET /api/v1/applications/{id}/executors          [ExecutorSummary], active executors
//	GET /api/v1/applications/{id}/allexecutors       [ExecutorSummary], removed ones too
//	GET /api/v1/applications/{id}/jobs[?status=S]    [JobData]
//	GET /api/v1/applications/{id}/jobs/{jobId}       JobData
//
// Field names are Spark's (id, hostPort, isActive, totalCores, activeTasks,
// completedTasks, failedTasks, jobId, status, numTasks, numActiveTasks,
// numCompletedTasks, ...); storage, memory and stage figures, which
// sparkrpc does not have, are left out. The resource manager serves
// /api/v1/applications[?state=RUNNING,...], /api/v1/applications/{id} and
// /api/v1/nodes with YARN's field names (id, name, user, queue, state,
// finalStatus, progress, trackingUrl, startedTime, finishedTime, ...); a
// node manager /api/v1/containers.
//
// # Configuration
//
//	spark.ui.enabled          true   the driver serves its UI
//	spark.ui.port             4040   the driver UI's first port (0: a free port)
//	spark.port.maxRetries     16     ports tried after a port in use, each move logged
//	spark.authenticate        false  pages, API and /metrics require the secret:
//	spark.authenticate.secret        "Authorization: Bearer SECRET" (else 401)
//	spark.driver.appUIAddress        set to the driver UI's URL: the tracking URL
//
// No page changes state: there is no kill action, so spark.ui.killEnabled
// has nothing to allow.
package webui
