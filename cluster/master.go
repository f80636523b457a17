package cluster

// This file holds the master URLs: local[N], local-cluster[W,C,M] and
// rm://host:port.

import (
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

// MasterKind says which cluster a master string names.
type MasterKind int

// Master kinds.
const (
	// MasterLocal runs the driver and one executor in the submitting process.
	MasterLocal MasterKind = iota + 1
	// MasterLocalCluster embeds a resource manager and node managers in the
	// submitting process; the AM/driver and executors are child processes.
	MasterLocalCluster
	// MasterRM is a running resource manager at host:port.
	MasterRM
	// MasterKubernetes is a Kubernetes API server: k8s://https://HOST:PORT
	// (package cluster/kubernetes runs applications there).
	MasterKubernetes
)

// Master is a parsed --master string.
type Master struct {
	Kind MasterKind
	// Cores is the executor's core count for local[N].
	Cores int
	// Workers, WorkerCores and WorkerMemoryMB describe local-cluster[W,C,M].
	Workers        int
	WorkerCores    int
	WorkerMemoryMB int64
	// Address is the resource manager's address for rm://host:port.
	Address actor.RpcAddress
	// APIServer is the Kubernetes API server's URL for k8s://..., with its
	// scheme: k8s://HOST:PORT means https://HOST:PORT, as in Spark.
	APIServer string
	raw       string
}

// String returns the master string as given.
func (m Master) String() string { return m.raw }

var (
	localRe        = regexp.MustCompile(`^local\[([0-9]+|\*)\]$`)
	localClusterRe = regexp.MustCompile(`^local-cluster\[\s*([0-9]+)\s*,\s*([0-9]+)\s*,\s*([0-9]+)\s*\]$`)
)

// ParseMaster parses a master string: "local", "local[N]", "local[*]",
// "local-cluster[W,C,M]" (W node managers with C cores and M MiB each),
// "rm://host:port" or "k8s://[http[s]://]host[:port]". Anything else is an
// error matching ErrInvalidMaster.
func ParseMaster(s string) (Master, error) {
	bad := func(why string) (Master, error) {
		return Master{}, fmt.Errorf("%w: %q: %s (expected local, local[N], local[*], local-cluster[W,C,M], rm://host:port or k8s://https://host:port)", ErrInvalidMaster, s, why)
	}
	switch {
	case s == "local":
		return Master{Kind: MasterLocal, Cores: 1, raw: s}, nil
	case localRe.MatchString(s):
		g := localRe.FindStringSubmatch(s)[1]
		n := runtime.NumCPU()
		if g != "*" {
			var err error
			if n, err = strconv.Atoi(g); err != nil || n < 1 {
				return bad("the number of cores must be at least 1")
			}
		}
		return Master{Kind: MasterLocal, Cores: n, raw: s}, nil
	case localClusterRe.MatchString(s):
		g := localClusterRe.FindStringSubmatch(s)
		w, err1 := strconv.Atoi(g[1])
		c, err2 := strconv.Atoi(g[2])
		m, err3 := strconv.ParseInt(g[3], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || w < 1 || c < 1 || m < 1 {
			return bad("workers, cores and memory must be at least 1")
		}
		return Master{Kind: MasterLocalCluster, Workers: w, WorkerCores: c, WorkerMemoryMB: m, raw: s}, nil
	case len(s) > 5 && s[:5] == "rm://":
		addr, err := actor.ParseHostPort(s[5:])
		if err != nil || addr.Port == 0 {
			return bad("bad host:port")
		}
		return Master{Kind: MasterRM, Address: addr, raw: s}, nil
	case strings.HasPrefix(s, "k8s://"):
		server, why := kubernetesServer(strings.TrimPrefix(s, "k8s://"))
		if why != "" {
			return bad(why)
		}
		return Master{Kind: MasterKubernetes, APIServer: server, raw: s}, nil
	}
	return bad("unknown master")
}

// kubernetesServer returns the API server URL of a k8s:// master's rest (as
// Spark's KubernetesUtils.parseMasterUrl: no scheme means https), or why it
// is malformed.
func kubernetesServer(rest string) (string, string) {
	if rest == "" {
		return "", "no API server after k8s://"
	}
	if !strings.Contains(rest, "://") {
		rest = "https://" + rest
	}
	u, err := url.Parse(rest)
	if err != nil {
		return "", "bad API server URL"
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return "", "the API server's scheme must be https or http"
	}
	if u.Hostname() == "" {
		return "", "no API server host"
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "bad API server port"
		}
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "the API server URL takes no user, query or fragment"
	}
	return strings.TrimSuffix(u.String(), "/"), ""
}
