package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"time"
)

// authority is the control plane's certificate authority: it signs the API server's serving
// certificate, the API server's client certificate for the nodes, the nodes' serving certificates
// and the token webhook's.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// writeCertificates makes the control plane's authority and writes to the working folder its
// certificate (CAFile), the API server's serving certificate (for the loopback addresses, the
// service network's first address and the kubernetes service's names), the API server's client
// certificate for the nodes (group system:masters) and the service-account signing key.
func (c *ControlPlane) writeCertificates() (*authority, error) {
	ca, err := newAuthority()
	if err != nil {
		return nil, err
	}
	c.caFile = c.workPath("ca.crt")
	if err := os.WriteFile(c.caFile, ca.pem, 0o644); err != nil {
		return nil, err
	}
	loopback := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)}
	svcNames := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if err := ca.issue(c.workPath("apiserver.crt"), c.workPath("apiserver.key"), "kube-apiserver", nil, true, loopback, svcNames); err != nil {
		return nil, err
	}
	if err := ca.issue(c.workPath("apiserver-kubelet-client.crt"), c.workPath("apiserver-kubelet-client.key"), "kube-apiserver-kubelet-client", []string{"system:masters"}, false, nil, nil); err != nil {
		return nil, err
	}
	if err := writeRSAKey(c.workPath("sa.key")); err != nil {
		return nil, err
	}
	return ca, nil
}

func newAuthority() (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "sparkrpc-local-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// issue signs a leaf certificate and writes it and its key as PEM to certFile and keyFile.
func (a *authority) issue(certFile, keyFile, cn string, orgs []string, server bool, ips []net.IP, dns []string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	usage := x509.ExtKeyUsageClientAuth
	if server {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

// serverTLS is a TLS configuration serving a fresh certificate for 127.0.0.1 signed by a.
func (a *authority) serverTLS(certFile, keyFile string) (*tls.Config, error) {
	if err := a.issue(certFile, keyFile, "127.0.0.1", nil, true, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// writeRSAKey writes a new RSA key as PKCS#1 PEM: the service-account signing key.
func writeRSAKey(file string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
