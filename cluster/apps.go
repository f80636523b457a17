package cluster

// This file holds the registry of applications by name (submit's --class).

import (
	"context"
	"slices"
	"sync"
)

// AppFunc is an application: the Go counterpart of the main method of the
// class given to spark-submit's --class. It brings up its scheduler backend
// with sc.Driver, runs jobs on it, writes its results to sc.Stdout, and
// returns nil on success. ctx is cancelled when the application is killed.
type AppFunc func(ctx context.Context, sc *AppContext, args []string) error

var (
	appsMu sync.RWMutex
	apps   = make(map[string]AppFunc)
)

// RegisterApp registers fn under name, the value of submit's --class. It
// is meant to be called from an init function and panics on an empty name,
// a nil fn or a name registered twice, like database/sql.Register.
func RegisterApp(name string, fn AppFunc) {
	appsMu.Lock()
	defer appsMu.Unlock()
	if name == "" || fn == nil {
		panic("cluster: RegisterApp needs a name and a function")
	}
	if _, dup := apps[name]; dup {
		panic("cluster: RegisterApp called twice for application " + name)
	}
	apps[name] = fn
}

// LookupApp returns the application registered under name.
func LookupApp(name string) (AppFunc, bool) {
	appsMu.RLock()
	defer appsMu.RUnlock()
	fn, ok := apps[name]
	return fn, ok
}

// Apps returns the registered application names, sorted.
func Apps() []string {
	appsMu.RLock()
	defer appsMu.RUnlock()
	names := make([]string, 0, len(apps))
	for n := range apps {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// FindApp returns the application registered under name, or an
// *UnknownClassError that lists the registered ones.
func FindApp(name string) (AppFunc, error) {
	fn, ok := LookupApp(name)
	if !ok {
		return nil, &UnknownClassError{Name: name}
	}
	return fn, nil
}
