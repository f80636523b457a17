package kubeclient

// corev1.go holds the typed clients of the core/v1 resources the cluster
// manager uses (pods, secrets, services, events, namespaces), and the pod watches
// built on them. They are client-go's generic typed clients (gentype) over
// a scheme that knows core/v1 alone: even client-go's generated core/v1
// client links the scheme of every API group, the apply configurations and
// the discovery client into the sparkrpc command.

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// coreScheme knows the core/v1 types (and the meta/v1 options and status
// that come with them); coreCodecs and coreParams encode requests with it.
var (
	coreScheme = newCoreScheme()
	coreCodecs = serializer.NewCodecFactory(coreScheme)
	coreParams = runtime.NewParameterCodec(coreScheme)
)

func newCoreScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err) // registering known types does not fail
	}
	return s
}

// CoreV1 makes the typed clients of the core/v1 API group, on one REST
// client (one connection pool and one rate limiter).
type CoreV1 struct{ rest rest.Interface }

// newCoreV1 returns the core/v1 clients for the API server and credential
// of cfg.
func newCoreV1(cfg *rest.Config) (CoreV1, error) {
	c := *cfg
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = coreCodecs.WithoutConversion()
	rc, err := rest.RESTClientFor(&c)
	if err != nil {
		return CoreV1{}, err
	}
	return CoreV1{rest: rc}, nil
}

// PodClient is the typed client of the pods of one namespace.
type PodClient = *gentype.ClientWithList[*corev1.Pod, *corev1.PodList]

// Pods returns the client of the pods in namespace.
func (c CoreV1) Pods(namespace string) PodClient {
	// As client-go's generated pod client, ask for protobuf.
	return gentype.NewClientWithList("pods", c.rest, coreParams, namespace,
		func() *corev1.Pod { return &corev1.Pod{} }, func() *corev1.PodList { return &corev1.PodList{} },
		gentype.PrefersProtobuf[*corev1.Pod]())
}

// Secrets returns the client of the Secrets in namespace.
func (c CoreV1) Secrets(namespace string) *gentype.Client[*corev1.Secret] {
	return gentype.NewClient("secrets", c.rest, coreParams, namespace, func() *corev1.Secret { return &corev1.Secret{} })
}

// Services returns the client of the services in namespace.
func (c CoreV1) Services(namespace string) *gentype.Client[*corev1.Service] {
	return gentype.NewClient("services", c.rest, coreParams, namespace, func() *corev1.Service { return &corev1.Service{} })
}

// Events returns the client of the core/v1 Events in namespace.
func (c CoreV1) Events(namespace string) *gentype.Client[*corev1.Event] {
	return gentype.NewClient("events", c.rest, coreParams, namespace, func() *corev1.Event { return &corev1.Event{} })
}

// PodLog returns the log of a container of pod name in namespace, as opts
// (its container, tail lines, byte limit) say.
func (c CoreV1) PodLog(ctx context.Context, namespace, name string, opts *corev1.PodLogOptions) ([]byte, error) {
	return c.rest.Get().Namespace(namespace).Resource("pods").Name(name).SubResource("log").
		VersionedParams(opts, coreParams).DoRaw(ctx)
}

// PodLogStream streams the log of a container of pod name in namespace, as
// opts say; the caller closes the stream.
func (c CoreV1) PodLogStream(ctx context.Context, namespace, name string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return c.rest.Get().Namespace(namespace).Resource("pods").Name(name).SubResource("log").
		VersionedParams(opts, coreParams).Stream(ctx)
}

// Namespaces returns the client of the namespaces.
func (c CoreV1) Namespaces() *gentype.Client[*corev1.Namespace] {
	return gentype.NewClient("namespaces", c.rest, coreParams, "", func() *corev1.Namespace { return &corev1.Namespace{} })
}

// PodListWatch lists and watches, for tools/cache (informers,
// watch.UntilWithSync), the pods of pods' namespace that match
// labelSelector and fieldSelector (each may be empty).
func PodListWatch(pods PodClient, labelSelector, fieldSelector string) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector, o.FieldSelector = labelSelector, fieldSelector
			return pods.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector, o.FieldSelector = labelSelector, fieldSelector
			return pods.Watch(ctx, o)
		},
	}
}

// NamedPodListWatch lists and watches the one pod name.
func NamedPodListWatch(pods PodClient, name string) *cache.ListWatch {
	return PodListWatch(pods, "", fields.OneTermEqualSelector("metadata.name", name).String())
}
