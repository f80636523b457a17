package kubetest

// apiclient.go holds the control plane's own client of the API server, for
// what Start waits for: /readyz, the default ServiceAccount and the nodes.
// It is a plain REST client over a scheme that knows core/v1 alone: client-go's
// clientset (or its discovery client) would link the scheme and the clients of
// every API group into each program that starts a control plane, the sparkrpc
// command among them. Tests that want the clientset build it from RESTConfig.

import (
	"context"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// apiClient reads what Start waits for from the API server.
type apiClient struct{ rest *rest.RESTClient }

// newAPIClient returns the client for the API server and credential of cfg,
// on the connections of hc.
func newAPIClient(cfg *rest.Config, hc *http.Client) (apiClient, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return apiClient{}, err
	}
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &corev1.SchemeGroupVersion
	c.APIPath = "/api"
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(c, hc)
	if err != nil {
		return apiClient{}, err
	}
	return apiClient{rest: rc}, nil
}

// ready reports whether the API server's /readyz answers "ok".
func (a apiClient) ready(ctx context.Context) bool {
	b, err := a.rest.Get().AbsPath("/readyz").DoRaw(ctx)
	return err == nil && string(b) == "ok"
}

// serviceAccount returns the ServiceAccount name in namespace.
func (a apiClient) serviceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	sa := &corev1.ServiceAccount{}
	err := a.rest.Get().Namespace(namespace).Resource("serviceaccounts").Name(name).Do(ctx).Into(sa)
	return sa, err
}

// node returns the node name.
func (a apiClient) node(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	err := a.rest.Get().Resource("nodes").Name(name).Do(ctx).Into(n)
	return n, err
}
