// RpcAddress and EndpointAddress: the host:port and spark://name@host:port addresses.

package actor

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// RpcAddress is the listen address of an env: Spark's RpcAddress. An IPv6
// host is kept in brackets ("[::1]"), so HostPort can be dialled as is. The
// zero RpcAddress means "no address" (a client-mode env).
type RpcAddress struct {
	Host string
	Port int
}

// NewRpcAddress returns the address host:port, with an IPv6 host normalised
// to its short bracketed form ("::0:1" becomes "[::1]").
func NewRpcAddress(host string, port int) RpcAddress {
	return RpcAddress{Host: normalizeHost(host), Port: port}
}

func normalizeHost(host string) string {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if !strings.Contains(h, ":") {
		return host
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return "[" + ip.String() + "]"
	}
	return "[" + h + "]"
}

// IsZero reports whether a is the zero address (no address).
func (a RpcAddress) IsZero() bool { return a.Host == "" && a.Port == 0 }

// HostPort returns "host:port".
func (a RpcAddress) HostPort() string { return a.Host + ":" + strconv.Itoa(a.Port) }

// SparkURL returns "spark://host:port".
func (a RpcAddress) SparkURL() string { return "spark://" + a.HostPort() }

// String returns HostPort, or "" for the zero address.
func (a RpcAddress) String() string {
	if a.IsZero() {
		return ""
	}
	return a.HostPort()
}

// InvalidURLError reports a string that is not a valid Spark address.
// Its text follows Spark: "Invalid Spark URL: URL" for endpoint addresses and
// "Invalid master URL: URL" for env addresses.
type InvalidURLError struct {
	// Kind is "Spark" or "master".
	Kind string
	// URL is the string that was parsed.
	URL string
	// Err, when set, says what is wrong with it.
	Err error
}

func (e *InvalidURLError) Error() string { return "Invalid " + e.Kind + " URL: " + e.URL }

// Unwrap returns the underlying reason, if any.
func (e *InvalidURLError) Unwrap() error { return e.Err }

// ParseHostPort parses "host:port" (IPv6 hosts in brackets) into an
// RpcAddress.
func ParseHostPort(hostPort string) (RpcAddress, error) {
	host, portStr, err := net.SplitHostPort(hostPort)
	if err != nil {
		return RpcAddress{}, &InvalidURLError{Kind: "master", URL: hostPort, Err: err}
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 || host == "" {
		return RpcAddress{}, &InvalidURLError{Kind: "master", URL: hostPort, Err: errors.New("bad host or port")}
	}
	return NewRpcAddress(host, port), nil
}

// ParseSparkURL parses "spark://host:port" into an RpcAddress (Spark's
// RpcAddress.fromSparkURL). Anything else is an *InvalidURLError whose text
// is "Invalid master URL: URL".
func ParseSparkURL(sparkURL string) (RpcAddress, error) {
	bad := func(why string) (RpcAddress, error) {
		return RpcAddress{}, &InvalidURLError{Kind: "master", URL: sparkURL, Err: errors.New(why)}
	}
	u, err := url.Parse(sparkURL)
	if err != nil {
		return bad(err.Error())
	}
	if u.Scheme != "spark" || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" {
		return bad("expected spark://host:port")
	}
	a, err := ParseHostPort(u.Host)
	if err != nil {
		return bad("expected spark://host:port")
	}
	return a, nil
}

// EndpointAddress names an endpoint: Spark's RpcEndpointAddress. Its string
// form is "spark://name@host:port", or "spark-client://name" when Address is
// zero (an endpoint of a client-mode env).
type EndpointAddress struct {
	Address RpcAddress
	Name    string
}

// String returns the address as a Spark URL.
func (a EndpointAddress) String() string {
	if a.Address.IsZero() {
		return "spark-client://" + a.Name
	}
	return "spark://" + a.Name + "@" + a.Address.HostPort()
}

// ParseEndpointAddress parses "spark://name@host:port" with Spark's rules:
// scheme spark, a host, a port, the endpoint name as the user info, and no
// path, query or fragment. IPv6 hosts go in brackets. Anything else is an
// *InvalidURLError whose text is "Invalid Spark URL: URL".
func ParseEndpointAddress(sparkURL string) (EndpointAddress, error) {
	bad := func(why string) (EndpointAddress, error) {
		return EndpointAddress{}, &InvalidURLError{Kind: "Spark", URL: sparkURL, Err: errors.New(why)}
	}
	u, err := url.Parse(sparkURL)
	if err != nil {
		return bad(err.Error())
	}
	if u.Scheme != "spark" {
		return bad("scheme must be spark")
	}
	if u.User == nil || u.User.Username() == "" {
		return bad("no endpoint name")
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return bad("unexpected password")
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || u.ForceQuery {
		return bad("unexpected path, query or fragment")
	}
	addr, err := ParseHostPort(u.Host)
	if err != nil {
		return bad("expected host:port")
	}
	return EndpointAddress{Address: addr, Name: u.User.Username()}, nil
}
