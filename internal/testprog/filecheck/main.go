package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/launcher"
)

// readTask reads the files its payload names (a JSON list) and returns
// what it read and where.
const readTask = "filecheck.read"

// reading is a task's result.
type reading struct {
	Executor string            `json:"executor"`
	Files    map[string]string `json:"files"`
}

func main() {
	cluster.RegisterApp("FileCheck", fileCheck)
	endpoints.RegisterTask(readTask, read)
	os.Exit(launcher.Run(os.Args[1:]))
}

func fileCheck(ctx context.Context, sc *cluster.AppContext, args []string) error {
	var names []string
	d, err := sc.Driver(ctx)
	if err != nil {
		return err
	}
	for i := 0; i < len(args); i++ {
		if args[i] == "--add" && i+1 < len(args) {
			if _, err := d.AddFile(args[i+1]); err != nil {
				return err
			}
			i++
			continue
		}
		names = append(names, args[i])
	}
	payload, err := json.Marshal(names)
	if err != nil {
		return err
	}
	n := 4 * max(1, len(d.Executors()))
	payloads := make([][]byte, n)
	for i := range payloads {
		payloads[i] = payload
	}
	results, err := d.RunJob(ctx, readTask, payloads)
	if err != nil {
		return err
	}
	seen := map[string]string{}
	var executors []string
	for _, r := range results {
		var got reading
		if err := json.Unmarshal(r, &got); err != nil {
			return err
		}
		if !slices.Contains(executors, got.Executor) {
			executors = append(executors, got.Executor)
		}
		for name, contents := range got.Files {
			if prev, ok := seen[name]; ok && prev != contents {
				return fmt.Errorf("%s read as %q and as %q", name, prev, contents)
			}
			seen[name] = contents
		}
	}
	for _, name := range names {
		sc.Printf("%s: %s\n", name, seen[name])
	}
	sc.Printf("read on %d executors\n", len(executors))
	return nil
}

func read(_ context.Context, tc endpoints.TaskContext, payload []byte) ([]byte, error) {
	var names []string
	if err := json.Unmarshal(payload, &names); err != nil {
		return nil, err
	}
	out := reading{Executor: tc.ExecutorID, Files: map[string]string{}}
	for _, name := range names {
		b, err := os.ReadFile(tc.File(name))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("executor %s", tc.ExecutorID), err)
		}
		out.Files[name] = string(b)
	}
	return json.Marshal(out)
}
