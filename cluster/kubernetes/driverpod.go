package kubernetes

// driverpod.go is cluster mode (Spark's KubernetesClientApplication): a
// driver pod and its headless service; submit follows the pod's phase.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeclient"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/kubeconf"
	"github.com/sparkrpc/sparkrpc/cluster/kubernetes/podspec"
	"github.com/sparkrpc/sparkrpc/netty"
	"github.com/sparkrpc/sparkrpc/webui"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// ErrDriverFailed is matched by the error of a cluster-mode application
// whose driver pod failed.
var ErrDriverFailed = errors.New("kubernetes: driver pod failed")

// keys never passed to the driver pod: the submission's own credentials,
// and the driver pod's template, a file of the submitting machine.
func passToDriver(key string) bool {
	return !strings.HasPrefix(key, kubeconf.KeyAuthSubmissionPrefix) && key != kubeconf.KeySubmissionRequestTimeout &&
		key != kubeconf.KeySubmissionConnectionTimeout && key != cluster.KeySubmitWorkingDir &&
		key != kubeconf.KeyDriverPodTemplateFile
}

// driverPod returns the driver pod of cluster mode and its headless service.
// Sensitive keys (spark.redaction.regex) are left out of its arguments and
// returned, but for those secret carries: with secret (see authSecret) the
// pod mounts it, its spark.authenticate.secret.file names the shared
// secret's file and its spark.kubernetes.authenticate.driver.oauthTokenFile
// the token's. The pod has the shape of kcfg.Driver (podspec.Pod) and
// carries the executors' template, when there is one, as a file that its
// spark.kubernetes.executor.podTemplateFile names.
func driverPod(cfg cluster.SubmitConfig, kcfg *kubeconf.Config, podName string, secret *corev1.Secret) (*corev1.Pod, *corev1.Service, []string, error) {
	conf := cfg.Conf
	red, err := newRedactor(conf)
	if err != nil {
		return nil, nil, nil, err
	}
	res, err := driverResources(conf)
	if err != nil {
		return nil, nil, nil, err
	}
	labels, annotations, err := driverMetadata(kcfg, conf)
	if err != nil {
		return nil, nil, nil, err
	}
	image := kcfg.DriverImage
	if image == "" {
		image = kcfg.ExecutorImage
	}
	args := []string{"driver", "--master", cfg.Master.String(), "--class", cfg.Class}
	pass, keys, dropped := driverConf(conf, red, secret)
	var extra []podspec.Step
	if t := kcfg.Executor.Template; t != nil {
		b, err := yaml.Marshal(t)
		if err != nil {
			return nil, nil, nil, err
		}
		extra = append(extra, podspec.CarryExecutorTemplate(b))
		pass[kubeconf.KeyExecutorPodTemplateFile] = podspec.ExecutorTemplateFile
	}
	args = append(args, kubeconf.Args(pass)...)
	args = append(args, "--")
	args = append(args, cfg.Args...)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: kcfg.Namespace, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy:      corev1.RestartPolicyNever,
			ServiceAccountName: kcfg.ServiceAccount,
			NodeSelector:       maps.Clone(kcfg.NodeSelector),
			Containers: []corev1.Container{{
				Name: kubeconf.DriverContainerName, Image: image, ImagePullPolicy: corev1.PullPolicy(kcfg.PullPolicy),
				Command: []string{kcfg.Executable}, Args: args, Resources: res, TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
				Ports: []corev1.ContainerPort{{Name: "driver-rpc-port", ContainerPort: kubeconf.DriverPort}},
				Env: []corev1.EnvVar{
					{Name: "SPARK_APPLICATION_ID", Value: kcfg.AppID},
					{Name: "SPARK_DRIVER_POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
				},
			}},
		},
	}
	if len(keys) > 0 {
		pod.Spec.Volumes = []corev1.Volume{kubeconf.AuthVolume(secret.Name, keys...)}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{kubeconf.AuthMount()}
	}
	return podspec.Pod(kcfg.Driver, pod, extra...), driverService(kcfg, podName), dropped, nil
}

// driverResources is the driver container's requests and limits: memory
// (spark.driver.memory plus its overhead) requested and limited, CPU
// requested (spark.kubernetes.driver.request.cores, else
// spark.driver.cores) and, when spark.kubernetes.driver.limit.cores is set,
// limited.
func driverResources(conf *actor.Conf) (corev1.ResourceRequirements, error) {
	var res corev1.ResourceRequirements
	memMiB, err := conf.GetSizeAsBytes(cluster.KeyDriverMemory, "1g", 1<<20)
	if err != nil {
		return res, kubeconf.WrapInvalid(err)
	}
	memMiB >>= 20
	over, err := kubeconf.OverheadMiB(conf, kubeconf.KeyDriverMemoryOverhead, memMiB)
	if err != nil {
		return res, err
	}
	cores := conf.Get(kubeconf.KeyDriverRequestCores, conf.Get(cluster.KeyDriverCores, "1"))
	if err := kubeconf.CheckQuantity(cores); err != nil {
		return res, kubeconf.Invalid(kubeconf.KeyDriverRequestCores, cores, err.Error())
	}
	mem := resource.MustParse(fmt.Sprintf("%dMi", memMiB+over))
	res.Requests = corev1.ResourceList{corev1.ResourceMemory: mem, corev1.ResourceCPU: resource.MustParse(cores)}
	res.Limits = corev1.ResourceList{corev1.ResourceMemory: mem}
	if l := conf.Get(kubeconf.KeyDriverLimitCores, ""); l != "" {
		q, err := resource.ParseQuantity(l)
		if err != nil {
			return res, kubeconf.Invalid(kubeconf.KeyDriverLimitCores, l, err.Error())
		}
		res.Limits[corev1.ResourceCPU] = q
	}
	return res, nil
}

// driverMetadata is the driver pod's labels (the user's
// spark.kubernetes.driver.label.* and Spark's) and annotations.
func driverMetadata(c *kubeconf.Config, conf *actor.Conf) (labels, annotations map[string]string, err error) {
	if labels, err = kubeconf.Labels(conf, kubeconf.KeyDriverLabelPrefix); err != nil {
		return nil, nil, err
	}
	if annotations, err = kubeconf.Annotations(conf, kubeconf.KeyDriverAnnotationPrefix); err != nil {
		return nil, nil, err
	}
	for _, reserved := range []string{kubeconf.LabelAppSelector, kubeconf.LabelAppName, kubeconf.LabelRole} {
		if v, ok := labels[reserved]; ok {
			return nil, nil, kubeconf.Invalid(kubeconf.KeyDriverLabelPrefix+reserved, v, "label "+reserved+" is reserved for Spark")
		}
	}
	labels[kubeconf.LabelAppSelector] = c.AppID
	labels[kubeconf.LabelAppName] = kubeconf.AppNameLabel(c.AppName)
	labels[kubeconf.LabelRole] = kubeconf.RoleDriver
	return labels, annotations, nil
}

// driverService is the headless service of the driver pod podName,
// <podName>-svc (its last 63 characters, starting with a letter), with
// the dots a pod's name may have made dashes: a service's name is a
// DNS-1035 label, which a pod's name (a DNS subdomain, which may start
// with a digit) need not be.
func driverService(c *kubeconf.Config, podName string) *corev1.Service {
	name := strings.ReplaceAll(podName, ".", "-") + "-svc"
	if len(name) > 63 {
		name = name[len(name)-63:]
	}
	name = strings.TrimLeft(name, "-0123456789")
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace, Labels: map[string]string{kubeconf.LabelAppSelector: c.AppID}},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{kubeconf.LabelAppSelector: c.AppID, kubeconf.LabelRole: kubeconf.RoleDriver},
			Ports: []corev1.ServicePort{{Name: "driver-rpc-port", Port: kubeconf.DriverPort}}},
	}
}

// driverConf is the configuration a driver pod gets as arguments: the keys
// that pass to the driver, less the sensitive ones (dropped, sorted),
// except that with secret the pod mounts its keys (returned) and the
// configuration names their files instead of the values.
func driverConf(conf *actor.Conf, red *redactor, secret *corev1.Secret) (pass map[string]string, keys, dropped []string) {
	pass = map[string]string{}
	if secret != nil {
		if _, ok := secret.Data[kubeconf.AuthSecretKey]; ok {
			keys = append(keys, kubeconf.AuthSecretKey)
			pass[netty.KeyAuthenticate] = "true"
			pass[netty.KeyAuthenticateSecretFile] = kubeconf.AuthSecretFile
			pass[kubeconf.KeyAuthSecretName] = secret.Name
		}
		if _, ok := secret.Data[kubeconf.DriverOAuthTokenKey]; ok {
			keys = append(keys, kubeconf.DriverOAuthTokenKey)
			pass[kubeconf.KeyAuthDriverPrefix+kubeconf.AuthOAuthTokenFile] = path.Join(kubeconf.AuthSecretMountPath, kubeconf.DriverOAuthTokenKey)
		}
	}
	for k, v := range conf.All() {
		_, replaced := pass[k]
		switch {
		case !passToDriver(k) || replaced:
		case red.sensitive(k):
			carried := k == netty.KeyAuthenticateSecret && slices.Contains(keys, kubeconf.AuthSecretKey) ||
				k == kubeconf.KeyAuthDriverPrefix+kubeconf.AuthOAuthToken && slices.Contains(keys, kubeconf.DriverOAuthTokenKey)
			if !carried {
				dropped = append(dropped, k)
			}
		default:
			pass[k] = v
		}
	}
	sort.Strings(dropped)
	return pass, keys, dropped
}

// submitCluster creates the driver pod and its service, then (unless
// spark.kubernetes.submission.waitAppCompletion is false) follows the pod
// until it ends, printing its state changes.
func submitCluster(ctx context.Context, cfg cluster.SubmitConfig) error {
	conf := cfg.Conf
	appID := conf.Get(cluster.KeyAppID, "")
	if appID == "" {
		appID = kubeconf.NewAppID()
	}
	conf.Set(cluster.KeyAppID, appID)
	kcfg, err := parseConf(conf, appID, true)
	if err != nil {
		return err
	}
	conf.SetIfMissing(kubeconf.KeyExecutorPodNamePrefix, kcfg.PodNamePrefix)
	podName := conf.Get(kubeconf.KeyDriverPodName, kcfg.PodNamePrefix+"-driver")
	conf.Set(kubeconf.KeyDriverPodName, podName)
	conf.Set(cluster.KeyDeployMode, "client") // the driver pod runs the driver itself
	wait, err := conf.GetBool(kubeconf.KeyWaitAppCompletion, true)
	if err != nil {
		return kubeconf.WrapInvalid(err)
	}
	client, err := kubeclient.New(conf, kubeclient.Options{Server: cfg.Master.APIServer})
	if err != nil {
		return err
	}
	if err := client.CheckAccess(ctx, kcfg.Namespace); err != nil {
		return err
	}
	secret, err := driverSecret(conf, kcfg)
	if err != nil {
		return err
	}
	pod, svc, dropped, err := driverPod(cfg, kcfg, podName, secret)
	if err != nil {
		return err
	}
	if len(dropped) > 0 {
		fmt.Fprintf(cfg.Stderr, "Not passed to the driver pod (sensitive keys, %s): %s\n", webui.KeyRedactionRegex, strings.Join(dropped, ", "))
	}
	if err := checkSubmission(ctx, cfg, client, kcfg, pod); err != nil {
		return err
	}
	if err := deployDriver(ctx, client, kcfg.Namespace, pod, svc, secret); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Stderr, "Deployed Spark application %s with application ID %s into Kubernetes: driver pod %s:%s\n",
		kcfg.AppName, appID, kcfg.Namespace, podName)
	if !wait {
		fmt.Fprintf(cfg.Stderr, "Application %s launched; not waiting for it (%s=false)\n", appID, kubeconf.KeyWaitAppCompletion)
		return nil
	}
	return followDriver(ctx, cfg, client, kcfg.Namespace, podName, kcfg.ReportInterval)
}

// driverSecret is the Kubernetes Secret of a driver pod: the application's
// shared secret with spark.authenticate on, and the driver's OAuth token
// when one is given; nil when there is neither.
func driverSecret(conf *actor.Conf, kcfg *kubeconf.Config) (*corev1.Secret, error) {
	auth, err := authEnabled(conf)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	if auth {
		value, _, err := appAuthSecret(conf)
		if err != nil {
			return nil, err
		}
		data[kubeconf.AuthSecretKey] = value
	}
	if tok := conf.Get(kubeconf.KeyAuthDriverPrefix+kubeconf.AuthOAuthToken, ""); tok != "" {
		data[kubeconf.DriverOAuthTokenKey] = []byte(tok)
	}
	if len(data) == 0 {
		return nil, nil
	}
	return authSecret(kcfg, AuthSecretName(kcfg.PodNamePrefix), data), nil
}

// deployDriver creates, with c, a driver pod's Secret (when not nil), the
// pod, and its service in namespace ns; the pod owns the other two. What it
// created is deleted again when a later step fails.
func deployDriver(ctx context.Context, c *kubeclient.Client, ns string, pod *corev1.Pod, svc *corev1.Service, secret *corev1.Secret) error {
	if secret != nil {
		// The Secret exists before the pod that mounts it; once the pod
		// exists it becomes the Secret's owner, so that deleting the
		// driver pod deletes it.
		cctx, cancel := context.WithTimeout(ctx, c.Timeout)
		_, err := c.CoreV1().Secrets(ns).Create(cctx, secret, metav1.CreateOptions{})
		cancel()
		if err != nil {
			return c.APIError(err, "create", "secrets", ns)
		}
	}
	deleteSecret := func() {
		if secret != nil {
			dctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
			_ = c.CoreV1().Secrets(ns).Delete(dctx, secret.Name, metav1.DeleteOptions{})
			cancel()
		}
	}
	cctx, cancel := context.WithTimeout(ctx, c.Timeout)
	created, err := c.CoreV1().Pods(ns).Create(cctx, pod, metav1.CreateOptions{})
	cancel()
	if err != nil {
		deleteSecret()
		return c.APIError(err, "create", "pods", ns)
	}
	deletePod := func() {
		dctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
		_ = c.CoreV1().Pods(ns).Delete(dctx, pod.Name, metav1.DeleteOptions{})
		cancel()
	}
	owner := ownerReferenceTo(created)
	if secret != nil {
		patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":%q,"uid":%q,"controller":true}]}}`,
			owner.Name, owner.UID)
		cctx, cancel := context.WithTimeout(ctx, c.Timeout)
		_, err := c.CoreV1().Secrets(ns).Patch(cctx, secret.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		cancel()
		if err != nil {
			err = c.APIError(err, "patch", "secrets/"+secret.Name, ns)
			deletePod()
			deleteSecret()
			return err
		}
	}
	svc.OwnerReferences = []metav1.OwnerReference{*owner}
	cctx, cancel = context.WithTimeout(ctx, c.Timeout)
	_, err = c.CoreV1().Services(ns).Create(cctx, svc, metav1.CreateOptions{})
	cancel()
	if err != nil {
		err = c.APIError(err, "create", "services", ns)
		deletePod() // the Secret, owned by the pod by now, goes with it
		return err
	}
	return nil
}

func driverFailure(p *corev1.Pod) string {
	var parts []string
	if p.Status.Reason != "" {
		parts = append(parts, p.Status.Reason)
	}
	if p.Status.Message != "" {
		parts = append(parts, p.Status.Message)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil {
			s := fmt.Sprintf("exit code %d", t.ExitCode)
			if t.Reason != "" {
				s += " (" + t.Reason + ")"
			}
			if t.Message != "" {
				s += ": " + strings.TrimSpace(t.Message)
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "failed"
	}
	return strings.Join(parts, "; ")
}

// ownerReferenceTo returns the controller ownerReference to pod.
func ownerReferenceTo(pod *corev1.Pod) *metav1.OwnerReference {
	ctrl := true
	return &metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &ctrl}
}
