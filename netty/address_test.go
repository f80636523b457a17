package netty_test

import (
	"errors"
	"testing"

	"github.com/sparkrpc/sparkrpc/actor"
)

// RpcAddressSuite and NettyRpcAddressSuite: the address rules that the
// networked env relies on (the parsers live in actor/address.go).

func TestRpcAddressHostPort(t *testing.T) {
	a := actor.NewRpcAddress("1.2.3.4", 1234)
	if a.Host != "1.2.3.4" || a.Port != 1234 || a.HostPort() != "1.2.3.4:1234" || a.String() != "1.2.3.4:1234" {
		t.Fatalf("%+v", a)
	}
}

func TestRpcAddressFromSparkURL(t *testing.T) {
	a, err := actor.ParseSparkURL("spark://1.2.3.4:1234")
	if err != nil || a != actor.NewRpcAddress("1.2.3.4", 1234) {
		t.Fatalf("%v, %v", a, err)
	}
}

func TestRpcAddressBadURLs(t *testing.T) {
	for _, u := range []string{
		"spark://1.2. 3.4:1234",  // typo
		"invalid://1.2.3.4:1234", // scheme
		"spark://1.2.3.4",        // no port
		"spark://1.2.3.4:x",
		"spark://1.2.3.4:1234/path",
		"",
	} {
		_, err := actor.ParseSparkURL(u)
		var ie *actor.InvalidURLError
		if !errors.As(err, &ie) || err.Error() != "Invalid master URL: "+u {
			t.Errorf("%q: err = %v", u, err)
		}
	}
}

func TestRpcAddressToSparkURL(t *testing.T) {
	if u := actor.NewRpcAddress("1.2.3.4", 1234).SparkURL(); u != "spark://1.2.3.4:1234" {
		t.Fatal(u)
	}
}

func TestRpcAddressIPv6(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"::1", "[::1]"},
		{"[::1]", "[::1]"},
		{"::0:1", "[::1]"},
		{"2600::", "[2600::]"},
		{"0:0:0:0:0:0:0:1", "[::1]"},
	} {
		a := actor.NewRpcAddress(tc.host, 1234)
		if a.Host != tc.want || a.HostPort() != tc.want+":1234" || a.SparkURL() != "spark://"+tc.want+":1234" {
			t.Errorf("%s: %+v", tc.host, a)
		}
	}
	a, err := actor.ParseSparkURL("spark://[::1]:1234")
	if err != nil || a.Host != "[::1]" || a.Port != 1234 {
		t.Fatalf("%v, %v", a, err)
	}
}

func TestRpcEndpointAddress(t *testing.T) {
	a := actor.EndpointAddress{Address: actor.NewRpcAddress("localhost", 12345), Name: "test"}
	if a.String() != "spark://test@localhost:12345" {
		t.Fatal(a.String())
	}
	if c := (actor.EndpointAddress{Name: "test"}).String(); c != "spark-client://test" {
		t.Fatal(c)
	}
	b, err := actor.ParseEndpointAddress("spark://test@localhost:12345")
	if err != nil || b != a {
		t.Fatalf("%v, %v", b, err)
	}
	v6, err := actor.ParseEndpointAddress("spark://test@[::1]:12345")
	if err != nil || v6.Address.Host != "[::1]" {
		t.Fatalf("%v, %v", v6, err)
	}
	for _, u := range []string{
		"spark://localhost:12345",       // no name
		"spark://test@localhost",        // no port
		"spark-client://test",           // not a lookup address
		"spark://test@localhost:1/path", // path
		"spark://test@localhost:1?q",    // query
		"http://test@localhost:1",       // scheme
		"spark://test@1.2. 3.4:1234",
	} {
		_, err := actor.ParseEndpointAddress(u)
		if err == nil || err.Error() != "Invalid Spark URL: "+u {
			t.Errorf("%q: err = %v", u, err)
		}
	}
}
