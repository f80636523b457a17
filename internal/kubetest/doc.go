// Package kubetest starts a real, local Kubernetes control plane for tests and for trying
// `sparkrpc submit --master k8s://...` on one machine: etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager and one or more sparkrpc-kubelet nodes (a virtual-kubelet node that runs
// each pod's first container command as a local process), each a child process on free loopback
// ports.
//
// The binaries are built from the module proxy by the separate Go module in ./controlplane (so this
// module does not depend on k8s.io/kubernetes):
//
//	internal/kubetest/build-controlplane DIR   # many minutes the first time
//	export SPARKRPC_KUBE_BIN=DIR               # BinEnv, read by the tests
//
// and a control plane is started from them with
//
//	cp, err := kubetest.Start(ctx, os.Getenv(kubetest.BinEnv), kubetest.WithPathPrefix(binDir))
//	defer cp.Stop()
//
// or, for users, with
//
//	go run ./internal/kubetest/cmd/sparkrpc-localkube --bin DIR
//
// which prints the kubeconfig path and the --master URL and stops everything on Ctrl-C.
//
// What the control plane is:
//   - kube-apiserver on https://127.0.0.1:PORT with a serving certificate from a fresh CA
//     (CAFile), a static token file holding the admin token (AdminToken, group system:masters)
//     and the components' tokens, a token webhook served by this process for AddToken, the
//     service-account key pair from one generated RSA key, and --authorization-mode=Node,RBAC, so
//     that users added with AddToken get only what RBAC grants them.
//   - kube-controller-manager with only these controllers: ownerReference garbage collection, namespace
//     deletion, the default service account and the kube-root-ca.crt config map. Nothing else: no
//     replica sets, jobs, node lifecycle (no eviction of pods on a lost node), endpoints or PodGC.
//   - kube-scheduler with its defaults: a pod that does not fit any node stays Pending with a
//     FailedScheduling event, as on a real cluster.
//   - Nodes named sparkrpc-node-N with the capacity of WithNodeCapacity, InternalIP 127.0.0.1.
//     A pod's first container runs as a process in its own process group with the container's
//     command, args and environment (Downward API fieldRefs included, status.podIP is 127.0.0.1)
//     and PATH prefixed by WithPathPrefix, in a working directory of its own. Images are not
//     pulled: WithImage(IMAGE, DIR) makes DIR the programs of IMAGE, where the command of a
//     container running IMAGE is looked up before PATH (an image not named so runs what PATH
//     finds), as a user's image holds the user's program; restart policies are not applied, other containers are not run. Its phase goes
//     Pending, Running (Ready while the process runs), Succeeded or Failed with the exit code;
//     deletion sends SIGTERM to the group and SIGKILL after the grace period, and the pod leaves
//     the API as soon as its process has ended; `kubectl logs` works. Volumes (projected
//     service-account tokens, config maps, secrets, Downward API, emptyDir) are written to the
//     working directory (mode 0700; secret files 0600; a Secret is read from the API server when
//     the pod starts), each mount a link at its mount path relative to it
//     (./var/run/secrets/kubernetes.io/serviceaccount/token); a mount path in the container's
//     command, args or environment values (a word starting with it) is rewritten to its link, so
//     that --conf k=/mnt/secret/key finds the file; the volumes are removed as soon as the
//     process has ended. A pod with a service account gets KUBECONFIG naming its token and the
//     CA. The environment is the container's own plus PATH, HOME, TMPDIR, LANG, TZ, HOSTNAME and
//     KUBERNETES_SERVICE_HOST/PORT: never the node's other variables. There is no cluster DNS and no service network: pods
//     reach each other and the API server on 127.0.0.1 (KUBERNETES_SERVICE_HOST/PORT name the
//     API server).
//
// Every child is killed if the starting process dies (Pdeathsig), and Stop ends them in order
// (nodes, controllers, API server, etcd) leaving no process behind.
//
// # Files
//
//   - kubetest.go: ControlPlane, Start and its steps (the components' flags and kubeconfigs), and
//     Stop.
//   - options.go: Start's options.
//   - certs.go: the control plane's certificate authority, the certificates it issues and those
//     Start writes for the API server.
//   - tokens.go: the static token file of the admin and the components, the token webhook and
//     AddToken.
//   - apiclient.go: the control plane's own REST client, for /readyz, the default ServiceAccount
//     and the nodes (no clientset: tests build theirs from RESTConfig).
//   - process.go: a component's child process: start, exit, stop and log tail.
//   - procattr_linux.go, procattr_unix.go: a component's process attributes.
//   - wait.go: Start's waits for the API server, the default ServiceAccount and the nodes, and free
//     loopback ports.
//   - build-controlplane: builds the binaries from ./controlplane.
//   - cmd/sparkrpc-localkube: the control plane for users.
package kubetest
