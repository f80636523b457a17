// TLS for connections, configured from spark.ssl.rpc.* keys.

package netty

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/sparkrpc/sparkrpc/actor"
)

func sslKey(conf *actor.Conf, key string) (string, bool) {
	if v, ok := conf.Lookup(key); ok {
		return v, true
	}
	const rpcPrefix = "spark.ssl.rpc."
	return conf.Lookup("spark.ssl." + key[len(rpcPrefix):])
}

// sslBool reads the boolean key through sslKey, or returns def when
// neither it nor the key it falls back to is set; a value that is not a
// boolean is a *actor.ConfError naming key.
func sslBool(conf *actor.Conf, key string, def bool) (bool, error) {
	v, ok := sslKey(conf, key)
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return def, &actor.ConfError{Key: key, Value: v, Err: err}
	}
	return b, nil
}

// tlsConfigs builds the server and client TLS configurations from conf, or
// nils when TLS is off. clientMode envs need no certificate unless the
// servers they talk to require one.
func tlsConfigs(conf *actor.Conf) (server, client *tls.Config, err error) {
	enabled, err := sslBool(conf, KeySSLEnabled, false)
	if err != nil || !enabled {
		return nil, nil, err
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
	verifyHost, err := sslBool(conf, KeySSLVerifyHostname, true)
	if err != nil {
		return nil, nil, err
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

// isRemoteCertAlert reports whether err is a TLS alert by which the peer
// refused this env's certificate (bad, unknown CA, expired, required...).
func isRemoteCertAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && strings.Contains(op.Err.Error(), "certificate")
}

// tlsDialError classifies err, a dialer's failure in or right after the TLS
// handshake with peer, as a handshake failure (ErrAuthFailed for a refused
// certificate, either side's; ErrProtocol otherwise) naming the key to fix.
func tlsDialError(peer string, err error) error {
	switch {
	case untrustedCert(err):
		return fmt.Errorf("%w: TLS handshake with %s: its certificate does not verify (%s, %s): %w",
			ErrAuthFailed, peer, KeySSLTrustStore, KeySSLVerifyHostname, err)
	case isRemoteCertAlert(err):
		return fmt.Errorf("%w: TLS handshake with %s: the peer refused this env's certificate (%s, %s): %w",
			ErrAuthFailed, peer, KeySSLCertChain, KeySSLTrustStore, err)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%w: TLS handshake with %s: %w (the peer closed the connection: is TLS off there? %s is on here)",
			ErrProtocol, peer, err, KeySSLEnabled)
	}
	return fmt.Errorf("%w: TLS handshake with %s: %w", ErrProtocol, peer, err)
}

// tlsAcceptError classifies err, a listener's failure in the TLS handshake
// of an inbound connection, naming the key to fix: a client certificate
// missing or not verified by the trust store is ErrAuthFailed; a peer that
// does not speak TLS, and anything else, ErrProtocol.
func tlsAcceptError(err error) error {
	var header tls.RecordHeaderError
	switch {
	case errors.As(err, &header):
		return fmt.Errorf("%w: TLS handshake: the peer does not speak TLS (is %s off there?): %w", ErrProtocol, KeySSLEnabled, err)
	case untrustedCert(err), strings.Contains(err.Error(), "didn't provide a certificate"):
		return fmt.Errorf("%w: TLS handshake: the peer's certificate is missing or not trusted (%s there, %s here): %w",
			ErrAuthFailed, KeySSLCertChain, KeySSLTrustStore, err)
	}
	return fmt.Errorf("%w: TLS handshake: %w", ErrProtocol, err)
}

// untrustedCert reports whether err is a certificate that did not verify
// against the trust store (or, for a dialer, against the host's name).
func untrustedCert(err error) bool {
	var (
		verr    *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		host    x509.HostnameError
	)
	return errors.As(err, &verr) || errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host)
}
