package driverrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/sparkrpc/sparkrpc/actor"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// The application's EnvironmentUpdate hides the authentication secret in
// every value, the secret read from spark.authenticate.secret.file too.
func TestEnvironmentHidesTheSecretFromItsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte("s3cr3tvalue"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := actor.NewConf().Set("spark.authenticate", "true").Set("spark.authenticate.secret.file", file).
		Set("spark.myapp.dsn", "postgres://u:s3cr3tvalue@db/x")
	env, err := actor.NewEnv("sparkDriver", conf)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Shutdown(context.Background())
	got := make(chan endpoints.EnvironmentUpdate, 1)
	d, err := endpoints.NewDriver(env, endpoints.WithListener(endpoints.ListenerFunc(func(ev endpoints.Event) {
		if e, ok := ev.(endpoints.EnvironmentUpdate); ok {
			got <- e
		}
	})))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop(context.Background())
	a, err := newAppEvents(conf, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.start(d, "app-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		for _, kv := range e.Properties {
			if strings.Contains(kv[1], "s3cr3tvalue") {
				t.Fatalf("%s = %q shows the secret", kv[0], kv[1])
			}
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no EnvironmentUpdate")
	}
}
