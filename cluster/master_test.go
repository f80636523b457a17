package cluster_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/sparkrpc/sparkrpc/cluster"
)

func TestParseMaster(t *testing.T) {
	cases := []struct {
		in   string
		want cluster.Master
		ok   bool
	}{
		{"local", cluster.Master{Kind: cluster.MasterLocal, Cores: 1}, true},
		{"local[3]", cluster.Master{Kind: cluster.MasterLocal, Cores: 3}, true},
		{"local[*]", cluster.Master{Kind: cluster.MasterLocal, Cores: runtime.NumCPU()}, true},
		{"local-cluster[2, 1, 512]", cluster.Master{Kind: cluster.MasterLocalCluster, Workers: 2, WorkerCores: 1, WorkerMemoryMB: 512}, true},
		{"rm://rm.example.com:8032", cluster.Master{Kind: cluster.MasterRM}, true},
		{"rm://[::1]:8032", cluster.Master{Kind: cluster.MasterRM}, true},
		{"local[0]", cluster.Master{}, false},
		{"local[]", cluster.Master{}, false},
		{"local-cluster[2,1]", cluster.Master{}, false},
		{"local-cluster[2,0,512]", cluster.Master{}, false},
		{"rm://host", cluster.Master{}, false},
		{"rm://host:0", cluster.Master{}, false},
		{"spark://host:7077", cluster.Master{}, false},
		{"", cluster.Master{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			m, err := cluster.ParseMaster(tc.in)
			if !tc.ok {
				if !errors.Is(err, cluster.ErrInvalidMaster) {
					t.Fatalf("ParseMaster(%q) = %+v, %v; want ErrInvalidMaster", tc.in, m, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != tc.want.Kind || m.Cores != tc.want.Cores || m.Workers != tc.want.Workers ||
				m.WorkerCores != tc.want.WorkerCores || m.WorkerMemoryMB != tc.want.WorkerMemoryMB || m.String() != tc.in {
				t.Fatalf("ParseMaster(%q) = %+v", tc.in, m)
			}
			if m.Kind == cluster.MasterRM && m.Address.Port != 8032 {
				t.Fatalf("address %v", m.Address)
			}
		})
	}
}

func FuzzParseMaster(f *testing.F) {
	for _, s := range []string{"local[2]", "local-cluster[1,2,3]", "rm://h:1", "local[*]", "rm://[::1]:9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := cluster.ParseMaster(s)
		if err != nil {
			if !errors.Is(err, cluster.ErrInvalidMaster) {
				t.Fatalf("error %v does not match ErrInvalidMaster", err)
			}
			return
		}
		if m.String() != s || m.Kind == 0 {
			t.Fatalf("ParseMaster(%q) = %+v", s, m)
		}
		if m.Kind == cluster.MasterLocal && m.Cores < 1 || m.Kind == cluster.MasterLocalCluster && (m.Workers < 1 || m.WorkerCores < 1 || m.WorkerMemoryMB < 1) {
			t.Fatalf("ParseMaster(%q) accepted %+v", s, m)
		}
	})
}

func TestRegisterApp(t *testing.T) {
	if _, ok := cluster.LookupApp("example.SumOfSquares"); !ok {
		t.Fatal("a registered application is not found")
	}
	if _, ok := cluster.LookupApp("nope"); ok {
		t.Fatal("an unknown application is found")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a name twice does not panic")
		}
	}()
	cluster.RegisterApp("example.SumOfSquares", nil)
}
