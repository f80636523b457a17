// Package rmclient is the resource manager's client (YARN's YarnClient):
// it asks for new applications, stages their resources, submits them,
// follows their reports (AppHandle), kills them, lists them, lists the
// cluster's nodes and reads containers' logs, as the user it names
// (Client.AsUser).
//
// # Staging
//
// A submission's program and files (Submission.Program, Submission.Files;
// Resources names them) are streamed to the resource manager after
// NewApplication and before the submission (Client.Stage): in chunks of
// 256 KiB, a few in flight, hashed with SHA-256 as they are read, then
// committed with their size and digest. The node managers localize them
// for every container of the application.
//
// # Files
//
//	client.go   Client, Submission, AppReport and AppHandle
//	staging.go  Resources and Stage: the program and files, streamed to the resource manager
//	logs.go     containers' logs: listing and copying them from the node managers
package rmclient
