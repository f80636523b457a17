// TLS for connections, configured from spark.ssl.rpc.* keys.

package netty

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
)

func sslKey(conf *actor.Conf, key string) (string, bool) {
	if v, ok := conf.Lookup(key); ok {
		return v, true
	}
	const rpcPrefix = "spark.ssl.rpc."
	return conf.Lookup("spark.ssl." + key[len(rpcPrefix):])
}

// tlsConfigs builds the server and client TLS configurations from conf, or
// nils when TLS is off. clientMode envs need no certificate unless the
// servers they talk to require one.
func tlsConfigs(conf *actor.Conf) (server, client *tls.Config, err error) {
	enabled := false
	if v, ok := sslKey(conf, KeySSLEnabled); ok {
		if enabled, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return nil, nil, &actor.ConfError{Key: KeySSLEnabled, Value: v, Err: err}
		}
	}
	if !enabled {
		return nil, nil, nil
	}
	certFile, hasCert := sslKey(conf, KeySSLCertChain)
	keyFile, hasKey := sslKey(conf, KeySSLPrivateKey)
	var certs []tls.Certificate
	if hasCert || hasKey {
		if !hasCert || !hasKey {
			return nil, nil, fmt.Errorf("netty: %s and %s must be set together", KeySSLCertChain, KeySSLPrivateKey)
		}
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("netty: loading %s/%s: %w", KeySSLCertChain, KeySSLPrivateKey, err)
		}
		certs = []tls.Certificate{cert}
	}
	var pool *x509.CertPool
	if caFile, ok := sslKey(conf, KeySSLTrustStore); ok {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, nil, fmt.Errorf("netty: reading %s: %w", KeySSLTrustStore, err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("netty: %s (%s) holds no PEM certificate", KeySSLTrustStore, caFile)
		}
	}
	verifyHost := true
	if v, ok := sslKey(conf, KeySSLVerifyHostname); ok {
		if verifyHost, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return nil, nil, &actor.ConfError{Key: KeySSLVerifyHostname, Value: v, Err: err}
		}
	}
	server = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: certs}
	if pool != nil {
		server.ClientCAs = pool
		server.ClientAuth = tls.RequireAndVerifyClientCert
	}
	client = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: certs, RootCAs: pool}
	if !verifyHost {
		// Verify the chain but not the name: peers advertise addresses that
		// the certificate need not list.
		client.InsecureSkipVerify = true //nolint:gosec // the chain is verified below
		client.VerifyConnection = func(cs tls.ConnectionState) error {
			opts := x509.VerifyOptions{Roots: pool, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	}
	return server, client, nil
}
