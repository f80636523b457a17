package kubetest

// tokens.go holds the control plane's token authentication: the static
// token file of the admin and the components, the webhook that
// kube-apiserver asks about other bearer tokens, AddToken which feeds it,
// and the random tokens themselves.

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// componentToken is a component's static bearer token and the user it authenticates as.
type componentToken struct{ token, user string }

// staticTokens are the components' tokens in the API server's static token file.
type staticTokens struct {
	scheduler, controllerManager componentToken
	nodes                        []componentToken // one per NodeNames entry, in its order
}

// writeTokenFile makes the admin token (AdminToken) and the components' tokens and writes them as
// the API server's static token file. Tokens added later are answered by the webhook.
func (c *ControlPlane) writeTokenFile(file string) (staticTokens, error) {
	c.adminToken = newToken()
	toks := staticTokens{
		scheduler:         componentToken{newToken(), "system:kube-scheduler"},
		controllerManager: componentToken{newToken(), "system:kube-controller-manager"},
	}
	for _, name := range c.nodeNames {
		toks.nodes = append(toks.nodes, componentToken{newToken(), "system:node:" + name})
	}
	var csv strings.Builder
	fmt.Fprintf(&csv, "%s,admin,admin,\"system:masters\"\n", c.adminToken)
	// The components run as system:masters: the kube-controller-manager then needs no
	// per-controller service accounts, and the nodes' informers may list all secrets and config maps.
	for _, t := range append([]componentToken{toks.scheduler, toks.controllerManager}, toks.nodes...) {
		fmt.Fprintf(&csv, "%s,%s,%s,\"system:masters\"\n", t.token, t.user, t.user)
	}
	if err := os.WriteFile(file, []byte(csv.String()), 0o600); err != nil {
		return staticTokens{}, err
	}
	return toks, nil
}

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
