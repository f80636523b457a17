package kubeclient

// authorizationv1.go holds the typed client of the authorization/v1
// SubjectAccessReviews, with which submit asks whether the driver's service
// account may do what the driver does, over a scheme that knows
// authorization/v1 alone (as corev1.go's knows core/v1 alone).

import (
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
)

var (
	authorizationScheme = newAuthorizationScheme()
	authorizationCodecs = serializer.NewCodecFactory(authorizationScheme)
	authorizationParams = runtime.NewParameterCodec(authorizationScheme)
)

func newAuthorizationScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := authorizationv1.AddToScheme(s); err != nil {
		panic(err) // registering known types does not fail
	}
	return s
}

// AuthorizationV1 makes the typed clients of the authorization/v1 API
// group.
type AuthorizationV1 struct{ rest rest.Interface }

// newAuthorizationV1 returns the authorization/v1 clients for the API
// server and credential of cfg.
func newAuthorizationV1(cfg *rest.Config) (AuthorizationV1, error) {
	c := *cfg
	c.GroupVersion = &authorizationv1.SchemeGroupVersion
	c.APIPath = "/apis"
	c.NegotiatedSerializer = authorizationCodecs.WithoutConversion()
	rc, err := rest.RESTClientFor(&c)
	if err != nil {
		return AuthorizationV1{}, err
	}
	return AuthorizationV1{rest: rc}, nil
}

// SubjectAccessReviews returns the client of the SubjectAccessReviews
// (cluster-wide; only Create is served): whether a user, such as a service
// account system:serviceaccount:NAMESPACE:NAME, may do a verb on a resource.
func (c AuthorizationV1) SubjectAccessReviews() *gentype.Client[*authorizationv1.SubjectAccessReview] {
	return gentype.NewClient("subjectaccessreviews", c.rest, authorizationParams, "",
		func() *authorizationv1.SubjectAccessReview { return &authorizationv1.SubjectAccessReview{} })
}
