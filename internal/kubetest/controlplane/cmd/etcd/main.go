// Command etcd is a single-member etcd server built from go.etcd.io/etcd/server/v3/embed at the
// version k8s.io/kubernetes requires, for the local test control plane. It listens on the given
// client and peer URLs (loopback in tests), keeps its data in --data-dir, and stops cleanly on
// SIGTERM or SIGINT.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		os.Exit(1)
	}
}

func run() error {
	dataDir := flag.String("data-dir", "", "directory of the member's data (required)")
	clientURL := flag.String("listen-client-urls", "http://127.0.0.1:2379", "URL clients connect to (also advertised)")
	peerURL := flag.String("listen-peer-urls", "http://127.0.0.1:2380", "URL of the peer listener (also advertised)")
	name := flag.String("name", "default", "member name")
	noFsync := flag.Bool("unsafe-no-fsync", false, "skip fsync: faster, loses data on a machine crash (tests only)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	startTimeout := flag.Duration("start-timeout", time.Minute, "how long to wait for the member to be ready")
	flag.Parse()
	if *dataDir == "" {
		return fmt.Errorf("--data-dir is required")
	}
	curl, err := url.Parse(*clientURL)
	if err != nil {
		return fmt.Errorf("--listen-client-urls: %w", err)
	}
	purl, err := url.Parse(*peerURL)
	if err != nil {
		return fmt.Errorf("--listen-peer-urls: %w", err)
	}

	cfg := embed.NewConfig()
	cfg.Name = *name
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*curl}
	cfg.AdvertiseClientUrls = []url.URL{*curl}
	cfg.ListenPeerUrls = []url.URL{*purl}
	cfg.AdvertisePeerUrls = []url.URL{*purl}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = *noFsync
	cfg.LogLevel = *logLevel
	cfg.LogOutputs = []string{"stderr"}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(*startTimeout):
		e.Server.Stop()
		return fmt.Errorf("not ready within --start-timeout %s", *startTimeout)
	}
	fmt.Fprintf(os.Stderr, "etcd: ready, serving clients on %s\n", curl)

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sigs:
		fmt.Fprintf(os.Stderr, "etcd: %s, stopping\n", s)
		return nil
	case err := <-e.Err():
		return err
	}
}
