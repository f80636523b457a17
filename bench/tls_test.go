package bench_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkrpc/sparkrpc/bench"
	"github.com/sparkrpc/sparkrpc/internal/testutil"
)

// A run with TLS measures remote-send and remote-ask, sparkrpc and every
// baseline, over TLS: every message arrives exactly once, the report says
// the run used TLS and how, and the certificate's folder is gone when Run
// returns. (That the connections really are TLS is checked in
// tls_internal_test.go, where the harness's envs and connections can be
// reached.)
func TestTLSRunDeliversEveryMessage(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where os.MkdirTemp puts the certificate
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := smallConfig(bench.ScenarioRemoteSend, bench.ScenarioRemoteAsk)
	cfg.TLS = true
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Fatalf("temporary files left after the run: %v (%v)", left, err)
	}
	if !rep.Passed || !rep.Config.TLS {
		t.Fatalf("passed %v, config TLS %v", rep.Passed, rep.Config.TLS)
	}
	ti := rep.TLS
	if ti == nil || ti.Version == "" || ti.CipherSuite == "" || !ti.Mutual ||
		!slices.Equal(ti.Scenarios, []string{bench.ScenarioRemoteSend, bench.ScenarioRemoteAsk}) {
		t.Fatalf("report TLS %+v", ti)
	}
	// remote-send per payload, remote-ask per payload with k=1 and k=64.
	if want := 3 * len(cfg.Payloads); len(rep.Results) != want {
		t.Fatalf("%d results, want %d", len(rep.Results), want)
	}
	for _, r := range rep.Results {
		if r.Figures == nil {
			t.Fatalf("%s: no sparkrpc figures (skipped %q, error %q)", r.Key(), r.Skipped, r.Error)
		}
		if v := r.Figures.Verified; !v.OK || v.Sent != cfg.Count || v.Received != cfg.Count {
			t.Fatalf("%s: verification %+v, want %d", r.Key(), v, cfg.Count)
		}
		for _, b := range r.Baselines {
			if b.Skipped != "" && b.Name == bench.ImplProtoactorRemote && testutil.RaceEnabled {
				continue
			}
			if b.Figures == nil || !b.Figures.Verified.OK || b.Figures.Verified.Received != cfg.Count {
				t.Fatalf("%s %s: baseline %+v", r.Key(), b.Name, b)
			}
		}
	}

	var table bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TLS: remote-send, remote-ask over TLS for sparkrpc and every baseline", "negotiated " + ti.Version} {
		if !strings.Contains(table.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := bench.ReadJSON(&js)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Config.TLS || back.TLS == nil || back.TLS.CipherSuite != ti.CipherSuite {
		t.Fatalf("JSON round trip: config TLS %v, TLS %+v", back.Config.TLS, back.TLS)
	}
}

// A run with TLS whose certificate cannot be written fails before it
// measures anything, saying why.
func TestTLSRunFailsWithoutTempDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	cfg := smallConfig(bench.ScenarioRemoteSend)
	cfg.TLS = true
	rep, err := bench.Run(context.Background(), cfg)
	if !errors.Is(err, bench.ErrTLSSetup) || rep != nil {
		t.Fatalf("Run = %v, %v; want no report and ErrTLSSetup", rep, err)
	}
}

// MeasureOne makes a certificate only for a scenario that runs over TLS: a
// local one measures with TLS on even where no certificate can be written,
// and a remote one fails with ErrTLSSetup there.
func TestMeasureOneMakesACertificateOnlyForTLSScenarios(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	cfg := smallConfig()
	cfg.TLS = true
	p := bench.Variants(cfg, bench.ScenarioLocalSend)[0]
	if f, err := bench.MeasureOne(context.Background(), cfg, bench.ScenarioLocalSend, bench.ImplSparkrpc, p); err != nil || !f.Verified.OK {
		t.Fatalf("MeasureOne(local-send) with TLS = %+v, %v; want it measured", f, err)
	}
	p = bench.Variants(cfg, bench.ScenarioRemoteSend)[0]
	if _, err := bench.MeasureOne(context.Background(), cfg, bench.ScenarioRemoteSend, bench.ImplSparkrpc, p); !errors.Is(err, bench.ErrTLSSetup) {
		t.Fatalf("MeasureOne(remote-send) with TLS = %v; want ErrTLSSetup", err)
	}
}

// A run without TLS says nothing about it; a comparison between a TLS run
// and a plain one says that they differ in it.
func TestTLSInTextOutput(t *testing.T) {
	plain := &bench.Report{Started: time.Now()}
	var buf bytes.Buffer
	if err := plain.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "TLS") {
		t.Fatalf("a plain run's table mentions TLS:\n%s", buf.String())
	}
	withTLS := &bench.Report{Started: time.Now(), Config: bench.ConfigRecord{TLS: true}}
	buf.Reset()
	if err := withTLS.WriteComparison(&buf, plain); err != nil {
		t.Fatal(err)
	}
	if want := "note: TLS off in the earlier run, on in this one"; !strings.Contains(buf.String(), want) {
		t.Fatalf("comparison lacks %q:\n%s", want, buf.String())
	}
}
