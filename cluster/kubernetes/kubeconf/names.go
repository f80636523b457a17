package kubeconf

// names.go holds the names the pods carry (Spark's labels, containers,
// port) and how an application's ids and resource names are made.

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Labels of the pods, as Spark sets them.
const (
	LabelAppSelector = "spark-app-selector"
	LabelAppName     = "spark-app-name"
	LabelRole        = "spark-role"
	LabelExecutorID  = "spark-exec-id"
	LabelProfileID   = "spark-resource-profile-id"
	RoleExecutor     = "executor"
	RoleDriver       = "driver"
	// EnvExecutorPodIP is the executor container's pod IP (Downward API).
	EnvExecutorPodIP = "SPARK_EXECUTOR_POD_IP"
	// ExecutorContainerName is the executor pods' container.
	ExecutorContainerName = "spark-kubernetes-executor"
	// DriverContainerName is the driver pod's container.
	DriverContainerName = "spark-kubernetes-driver"
	// DriverPort is the driver's RPC port in a driver pod (Spark's 7078).
	DriverPort = 7078
)

var (
	dnsLabelRe    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dnsSubdomain  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	labelValueRe  = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
	nonNameCharRe = regexp.MustCompile(`[^a-z0-9\-]`)
	dashesRe      = regexp.MustCompile(`-+`)
)

// MaxPrefixLen keeps <prefix>-exec-<id> a valid DNS label (Spark's 47).
const MaxPrefixLen = 47

// NewAppID returns a new Kubernetes application id, spark-<32 hex digits>
// (Spark's KubernetesConf.getKubernetesAppId).
func NewAppID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "spark-" + hex.EncodeToString(b[:])
}

// ResourceNamePrefix returns the default prefix of an application's pod
// and service names: its name and a unique suffix, lower-cased, with
// characters outside [a-z0-9-] turned into dashes (Spark's
// KubernetesConf.getResourceNamePrefix).
func ResourceNamePrefix(appName string) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:]) + strconv.FormatInt(time.Now().UnixMilli()&0xFFFFFFFFFF, 16)
	s := sanitizeName(appName + "-" + id)
	if len(s) > MaxPrefixLen {
		// Keep the unique suffix.
		s = strings.TrimLeft(s[len(s)-MaxPrefixLen:], "-")
	}
	return s
}

func sanitizeName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = nonNameCharRe.ReplaceAllString(s, "-")
	s = dashesRe.ReplaceAllString(s, "-")
	s = strings.TrimPrefix(s, "-")
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "x" + s[1:]
	}
	return s
}

// AppNameLabel returns the value of the spark-app-name label: the name
// sanitized as a DNS label of at most 63 characters (Spark's getAppNameLabel).
func AppNameLabel(appName string) string {
	s := strings.ToLower(strings.TrimSpace(appName))
	s = nonNameCharRe.ReplaceAllString(s, "-")
	s = dashesRe.ReplaceAllString(s, "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-")
}

// IsDNSLabel reports whether s is a DNS label (RFC 1123) as Kubernetes
// names are, without its length bound: lower-case letters, digits and
// inner dashes.
func IsDNSLabel(s string) bool { return dnsLabelRe.MatchString(s) }
