package kubernetes

// redaction.go says which configuration keys are sensitive (Spark's
// spark.redaction.regex), so that none of them reaches a pod's arguments.

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/webui"
)

var defaultRedaction = regexp.MustCompile(webui.DefaultRedactionRegex)

// redactor tells sensitive configuration keys: those spark.redaction.regex
// (webui.KeyRedactionRegex) or its default match: on Kubernetes the
// default is applied as well as the user's regex, never replaced by it, so
// that no secret-bearing key reaches a pod's arguments. A key naming a file (ending in "file", as
// spark.authenticate.secret.file or ...oauthTokenFile) holds a path, not a
// secret, and is not sensitive.
type redactor struct{ res []*regexp.Regexp }

func newRedactor(conf *actor.Conf) (*redactor, error) {
	re, err := userRedaction(conf)
	if err != nil || re == nil {
		return &redactor{res: []*regexp.Regexp{defaultRedaction}}, err
	}
	return &redactor{res: []*regexp.Regexp{defaultRedaction, re}}, nil
}

// userRedaction returns conf's spark.redaction.regex, nil when it is not
// set.
func userRedaction(conf *actor.Conf) (*regexp.Regexp, error) {
	s, ok := conf.Lookup(webui.KeyRedactionRegex)
	if !ok || s == "" {
		return nil, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return nil, kubeconf.Invalid(webui.KeyRedactionRegex, s, "not a regular expression: "+err.Error())
	}
	return re, nil
}

func (r *redactor) sensitive(key string) bool {
	if strings.HasSuffix(strings.ToLower(key), "file") || namesSecret(key) {
		return false
	}
	for _, re := range r.res {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}

// namesSecret reports whether key's value names Kubernetes Secrets (and
// where they are mounted or which of their keys are read), never a
// secret's value: the role's secrets.*, secretKeyRef.* and the image pull
// secrets. A driver pod needs its executors' ones to build their pods.
func namesSecret(key string) bool {
	if key == kubeconf.KeyImagePullSecrets {
		return true
	}
	for _, k := range []kubeconf.RoleKeys{kubeconf.DriverKeys, kubeconf.ExecutorKeys} {
		if strings.HasPrefix(key, k.SecretsPrefix) || strings.HasPrefix(key, k.SecretKeyRefPrefix) {
			return true
		}
	}
	return false
}

// parseConf is kubeconf.Parse; for a submission (from outside a driver
// pod, which submit has checked) it also refuses pod variables set to
// sensitive values.
func parseConf(conf *actor.Conf, appID string, submission bool) (*kubeconf.Config, error) {
	kcfg, err := kubeconf.Parse(conf, appID)
	if err != nil || !submission {
		return kcfg, err
	}
	if err := refuseSensitiveEnv(conf); err != nil {
		return nil, err
	}
	return kcfg, nil
}

// refuseSensitiveEnv refuses the keys that would set a pod's variable
// (spark.executorEnv.NAME, spark.kubernetes.driverEnv.NAME) to the value
// of a sensitive key: it would be in the pod's spec, which whoever may get
// pods reads (and a driver pod would not pass it on to its executors). The
// error names the first such key (in order), never its value, and the way
// that keeps the value in a Secret: secretKeyRef.
//
// The key is matched against spark.redaction.regex when it is set, else
// Spark's default: a user who sets a variable whose name only looks
// sensitive (HADOOP_TOKEN_FILE_LOCATION, a path) says so with a regex that
// does not match it. (Dropping keys from a pod's arguments, which nobody
// asked for, applies the default on top of it.)
func refuseSensitiveEnv(conf *actor.Conf) error {
	re, err := userRedaction(conf)
	if err != nil {
		return err
	}
	red := &redactor{res: []*regexp.Regexp{cmp.Or(re, defaultRedaction)}}
	var keys []string
	for k := range conf.All() {
		if (strings.HasPrefix(k, kubeconf.KeyExecutorEnvPrefix) || strings.HasPrefix(k, kubeconf.KeyDriverEnvPrefix)) && red.sensitive(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	role := kubeconf.ExecutorKeys
	name, ok := strings.CutPrefix(keys[0], kubeconf.KeyExecutorEnvPrefix)
	if !ok {
		role, name = kubeconf.DriverKeys, strings.TrimPrefix(keys[0], kubeconf.KeyDriverEnvPrefix)
	}
	return kubeconf.Invalid(keys[0], "*********(redacted)", fmt.Sprintf("a sensitive key (%s): its value would be in the pod's spec; "+
		"put it in a Kubernetes Secret and set %s%s=SECRET:KEY", webui.KeyRedactionRegex, role.SecretKeyRefPrefix, name))
}
