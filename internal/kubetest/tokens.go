package kubetest

// tokens.go holds the control plane's token authentication: the webhook
// that kube-apiserver asks about bearer tokens, AddToken which feeds it,
// and the random tokens of the admin and the components.

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// startWebhook serves the token webhook that AddToken feeds and writes the API server's
// configuration for it.
func (c *ControlPlane) startWebhook(ca *authority, kubeconfig string) error {
	tlsCfg, err := ca.serverTLS(filepath.Join(c.work, "webhook.crt"), filepath.Join(c.work, "webhook.key"))
	if err != nil {
		return err
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", tlsCfg)
	if err != nil {
		return err
	}
	c.webhook = &http.Server{Handler: http.HandlerFunc(c.serveTokenReview), ReadHeaderTimeout: 10 * time.Second}
	go c.webhook.Serve(ln) //nolint:errcheck // ends at Stop with ErrServerClosed

	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["webhook"] = &clientcmdapi.Cluster{Server: "https://" + ln.Addr().String() + "/tokenreview", CertificateAuthority: c.caFile}
	cfg.AuthInfos["kube-apiserver"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["webhook"] = &clientcmdapi.Context{Cluster: "webhook", AuthInfo: "kube-apiserver"}
	cfg.CurrentContext = "webhook"
	return clientcmd.WriteToFile(*cfg, kubeconfig)
}

func (c *ControlPlane) serveTokenReview(w http.ResponseWriter, r *http.Request) {
	var review authnv1.TokenReview
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.tokensMu.Lock()
	u, ok := c.tokens[review.Spec.Token]
	c.tokensMu.Unlock()
	review.Spec = authnv1.TokenReviewSpec{}
	review.Status = authnv1.TokenReviewStatus{Authenticated: ok}
	if ok {
		review.Status.User = u
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// AddToken makes token a valid bearer token of user in groups, at once and without restarting
// anything: tokens other than the admin's and the components' are checked by a webhook that the
// control plane's process serves. Authorization is RBAC's (and the Node authorizer's): bind roles
// to user or groups to grant rights.
func (c *ControlPlane) AddToken(token, user string, groups ...string) {
	c.tokensMu.Lock()
	defer c.tokensMu.Unlock()
	c.tokens[token] = authnv1.UserInfo{Username: user, UID: user, Groups: append([]string{"system:authenticated"}, groups...)}
}

func newToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
