package endpoints

// This file holds the files an application adds for its tasks: the
// driver's list (Driver.AddFile, Spark's SparkContext.addFile) and the
// executor's fetching of them (Spark's Executor.updateDependencies).

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sparkrpc/sparkrpc/actor"
)

// AddFile serves the file at path from the driver's file server and adds
// it to the files every task of the jobs submitted from then on finds in
// its executor's files folder, under its base name (TaskContext.File), as
// Spark's SparkContext.addFile. It returns the file's spark:// URI. Adding
// the same path again changes nothing; another file of the same base name
// is an error (actor.ErrAlreadyRegistered).
func (d *Driver) AddFile(path string) (string, error) {
	uri, err := d.env.FileServer().AddFile(path)
	if err != nil {
		return "", err
	}
	d.files.add(uri, time.Now())
	return uri, nil
}

// Files returns the spark:// URIs of the files added with AddFile.
func (d *Driver) Files() []string {
	return d.files.uris()
}

// addedFiles is the driver's list of added files: URI to the time it was
// added, in Unix milliseconds.
type addedFiles struct {
	mu    sync.Mutex
	files map[string]int64
}

func (a *addedFiles) add(uri string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.files == nil {
		a.files = map[string]int64{}
	}
	if _, ok := a.files[uri]; !ok {
		a.files[uri] = at.UnixMilli()
	}
}

// snapshot returns a copy of the list, nil when it is empty, for a job's
// tasks.
func (a *addedFiles) snapshot() map[string]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.files) == 0 {
		return nil
	}
	return maps.Clone(a.files)
}

func (a *addedFiles) uris() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Sorted(maps.Keys(a.files))
}

// dependencies fetches, on an executor, the added files a task names that
// it has not fetched yet, or has in an older version, into its files
// folder: one at a time, before the task runs.
type dependencies struct {
	env *actor.Env
	dir string

	mu      sync.Mutex
	fetched map[string]int64 // URI -> the added time of the version fetched
}

// update fetches what files names and the executor lacks; an error names
// the file, and fails the task.
func (d *dependencies) update(ctx context.Context, files map[string]int64) error {
	if len(files) == 0 {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fetched == nil {
		d.fetched = map[string]int64{}
	}
	for _, uri := range slices.Sorted(maps.Keys(files)) {
		at := files[uri]
		if have, ok := d.fetched[uri]; ok && have >= at {
			continue
		}
		if _, err := d.env.FetchFile(ctx, uri, d.dir); err != nil {
			return fmt.Errorf("fetching the added file %s: %w", uri, err)
		}
		d.fetched[uri] = at
	}
	return nil
}
