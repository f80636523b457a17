// Package rmclient is the resource manager's client (YARN's YarnClient):
// it asks for new applications, submits them, follows their reports
// (AppHandle), kills them, lists them, lists the cluster's nodes and reads
// containers' logs, as the user it names (Client.AsUser).
//
// # Files
//
//	client.go  Client, Submission, AppReport and AppHandle
//	logs.go    containers' logs: listing and copying them from the node managers
package rmclient
