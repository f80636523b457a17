// Command sparkrpc-localkube starts a local Kubernetes control plane (etcd, kube-apiserver,
// kube-scheduler, kube-controller-manager and process nodes; see package kubetest) so that
// `sparkrpc submit --master k8s://...` can be tried on one machine:
//
//	internal/kubetest/build-controlplane ~/.cache/sparkrpc-kube/bin
//	go run ./internal/kubetest/cmd/sparkrpc-localkube --bin ~/.cache/sparkrpc-kube/bin
//
// It writes an admin kubeconfig (to --kubeconfig, or into the control plane's working folder),
// prints its path, the --master URL and an export line for KUBECONFIG, and runs until SIGINT or
// SIGTERM, when it stops every process it started.
package main
