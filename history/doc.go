// Package history is sparkrpc's history server (Spark's HistoryServer and
// FsHistoryProvider): it reads the event logs that drivers write
// (spark.eventLog.enabled, package eventlog) from one folder and serves,
// through webui.NewHistoryServerUI, the list of applications and each
// one's pages and REST API, drawn by the templates of the driver's own UI
// from a webui.AppStore replayed from its log.
//
// A Provider lists the folder when it starts and every
// spark.history.fs.update.interval (10s) after that. For the list it reads
// each log's application events (start, end, error); a log still being
// written is read on from where the last reading ended. An application's
// pages are replayed from its log when first viewed and brought up to date
// with what the log gained since when viewed again; the pages of
// spark.history.retainedApplications (50) applications are kept in memory,
// the least recently viewed dropped before another is replayed, and at
// most two logs are replayed at once. The list never waits for a replay.
// Of several logs of one application (a rerun beside a log a killed
// driver left), the list and the pages show the one written last (of two
// with one modification time, the one whose path sorts last). An
// application is listed under the id and attempt of its log's application
// start, wherever in the log that is. A log cut short (its driver
// still writing, or killed) or holding lines that do not decode is shown
// as far as it can be read, with what could not be read. A finished log
// that changes after it was read (it was still being copied into the
// folder) is read again from its start.
//
// # Configuration
//
//	spark.history.fs.logDirectory       /tmp/spark-events  the event logs' folder (a path or file:/PATH)
//	spark.history.fs.update.interval    10s                how often the folder is read again
//	spark.history.retainedApplications  50                 applications whose pages are kept in memory
//	spark.history.ui.port               18080              the web UI's port (sparkrpc history-server)
//	spark.history.fs.cleaner.enabled    false              delete old logs (Cleaner), every
//	spark.history.fs.cleaner.interval   1d                 ...this long,
//	spark.history.fs.cleaner.maxAge     7d                 those last written longer ago, then
//	spark.history.fs.cleaner.maxNum     no bound           the oldest finished ones past this many
//
// # Files
//
//	config.go       the configuration keys and Config
//	provider.go     Provider: the folder's applications and their stores
//	application.go  one log: what the list shows of it, its store
//	summary.go      what the list shows of one log, from its events
//	problems.go     what the readings of a log could not read
//	cleaner.go      Cleaner: which old logs are deleted from the folder
package history
