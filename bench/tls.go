// TLS of the remote scenarios (Config.TLS): a self-signed certificate made
// at the start of a run, and what sparkrpc, the raw TCP baseline and
// protoactor's gRPC remote take from it.

package bench

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/netty"
)

// ErrTLSSetup is wrapped by Run and MeasureOne when Config.TLS is set and
// the certificate of the run cannot be made, written or used.
var ErrTLSSetup = errors.New("bench: TLS setup")

// tlsCertificate describes the certificate of a TLS run, in reports.
const tlsCertificate = "self-signed ECDSA P-256 for 127.0.0.1 and localhost"

// TLSInfo describes how a run with Config.TLS secured its connections.
type TLSInfo struct {
	// Version and CipherSuite are what a handshake with the run's
	// configuration negotiated (e.g. "TLS 1.3", "TLS_AES_128_GCM_SHA256").
	Version     string `json:"version"`
	CipherSuite string `json:"cipher_suite"`
	// Certificate describes the certificate every side used.
	Certificate string `json:"certificate"`
	// Mutual is true when both sides of a connection presented the
	// certificate and verified the other's (it is its own trust store).
	Mutual bool `json:"mutual"`
	// Scenarios are the scenarios of the run whose connections used TLS,
	// for sparkrpc and every baseline; the others ran in plaintext.
	Scenarios []string `json:"scenarios"`
}

// tlsSetup is the TLS of a run: the certificate and key as PEM files in a
// temporary folder (for sparkrpc, which reads spark.ssl.rpc.* keys) and as
// crypto/tls configurations (for the baselines). Both sides present the
// certificate and trust it, as netty does with a trust store.
type tlsSetup struct {
	dir               string
	certFile, keyFile string
	server, client    *tls.Config
	info              TLSInfo
}

// newTLSSetup makes a certificate, writes it and its key into a new
// temporary folder, and checks the configurations with a handshake over
// loopback. close removes the folder.
func newTLSSetup(ctx context.Context) (s *tlsSetup, err error) {
	certPEM, keyPEM, err := selfSignedCertificate(time.Now())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSSetup, err)
	}
	dir, err := os.MkdirTemp("", "sparkrpc-bench-tls-")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSSetup, err)
	}
	s = &tlsSetup{dir: dir, certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem")}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.close())
			s = nil
		}
	}()
	if err := os.WriteFile(s.certFile, certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSSetup, err)
	}
	if err := os.WriteFile(s.keyFile, keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSSetup, err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTLSSetup, err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	s.server = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}
	s.client = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ServerName:   "127.0.0.1",
	}
	state, err := s.probe(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: handshake over loopback: %v", ErrTLSSetup, err)
	}
	s.info = TLSInfo{
		Version:     tls.VersionName(state.Version),
		CipherSuite: tls.CipherSuiteName(state.CipherSuite),
		Certificate: tlsCertificate,
		Mutual:      true,
	}
	return s, nil
}

// selfSignedCertificate returns a self-signed ECDSA P-256 certificate for
// 127.0.0.1 and localhost, valid for a day from now, and its private key,
// both PEM-encoded.
func selfSignedCertificate(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "sparkrpc bench"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // it is its own trust store
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// probe makes one loopback connection with the configurations and returns
// the client's view of the handshake.
func (s *tlsSetup) probe(ctx context.Context) (tls.ConnectionState, error) {
	conns, err := newTCPConns(ctx, s, 1)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conns.close()
	return conns.clients[0].(*tls.Conn).ConnectionState(), nil
}

// close removes the folder of the certificate and key.
func (s *tlsSetup) close() error {
	if err := os.RemoveAll(s.dir); err != nil {
		return fmt.Errorf("bench: removing the TLS files: %w", err)
	}
	return nil
}

// conf returns a sparkrpc configuration with TLS on: the certificate as the
// env's chain and as its trust store (so both sides verify each other), and
// the host name checked (the envs dial 127.0.0.1, which it names).
func (s *tlsSetup) conf() *actor.Conf {
	return actor.NewConf().
		Set(netty.KeySSLEnabled, "true").
		Set(netty.KeySSLCertChain, s.certFile).
		Set(netty.KeySSLPrivateKey, s.keyFile).
		Set(netty.KeySSLTrustStore, s.certFile)
}

// handshake wraps the two sides of a loopback connection in TLS and
// completes the handshake on both before returning.
func (s *tlsSetup) handshake(ctx context.Context, client, server net.Conn) (*tls.Conn, *tls.Conn, error) {
	tc, ts := tls.Client(client, s.client), tls.Server(server, s.server)
	done := make(chan error, 1)
	go func() { done <- ts.HandshakeContext(ctx) }()
	errClient := tc.HandshakeContext(ctx)
	if errClient != nil {
		// The server may wait for what the client will not send.
		server.Close()
	}
	if err := errors.Join(errClient, <-done); err != nil {
		return nil, nil, err
	}
	return tc, ts, nil
}

// grpcOptions returns the dial and server options that put protoactor's
// gRPC remote on TLS with the run's certificate (mutual, as sparkrpc's).
func (s *tlsSetup) grpcOptions() (grpc.DialOption, grpc.ServerOption) {
	return grpc.WithTransportCredentials(credentials.NewTLS(s.client)), grpc.Creds(credentials.NewTLS(s.server))
}
