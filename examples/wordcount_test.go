package examples_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/examples"
)

// The splits of any partitioning count every word exactly once.
func TestWordCountSplitsCountEveryWordOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "bb", "ccc", "It's", "über", "x1"}
	var text strings.Builder
	want := map[string]int{}
	for i := 0; i < 500; i++ {
		n := rng.IntN(6)
		for j := 0; j < n; j++ {
			w := words[rng.IntN(len(words))]
			text.WriteString(w)
			text.WriteString([]string{" ", "  ", ", ", "\t"}[rng.IntN(4)])
			want[strings.ToLower(w)]++
		}
		text.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	fn, ok := endpoints.LookupTask(examples.WordCountTask)
	if !ok {
		t.Fatal("WordCount's task is not registered")
	}
	size := int64(text.Len())
	for _, parts := range []int{1, 2, 3, 7, 64, int(size)} {
		t.Run(fmt.Sprint(parts), func(t *testing.T) {
			got := map[string]int{}
			for i := 0; i < parts; i++ {
				payload, _ := json.Marshal(map[string]any{"path": path, "Start": size * int64(i) / int64(parts), "End": size * int64(i+1) / int64(parts)})
				res, err := fn(context.Background(), endpoints.TaskContext{Partition: i}, payload)
				if err != nil {
					t.Fatal(err)
				}
				var counts map[string]int
				if err := json.Unmarshal(res, &counts); err != nil {
					t.Fatal(err)
				}
				for w, n := range counts {
					got[w] += n
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("counts over %d splits:\n got %v\nwant %v", parts, got, want)
			}
		})
	}
}

// SparkPi's tasks are deterministic: a retried task returns the same count.
func TestSparkPiTaskIsDeterministic(t *testing.T) {
	fn, ok := endpoints.LookupTask(examples.SparkPiTask)
	if !ok {
		t.Fatal("SparkPi's task is not registered")
	}
	payload := make([]byte, 24)
	payload[7], payload[15] = 3, 200
	a, err1 := fn(context.Background(), endpoints.TaskContext{}, payload)
	b, err2 := fn(context.Background(), endpoints.TaskContext{}, payload)
	if err1 != nil || err2 != nil || string(a) != string(b) || len(a) != 8 {
		t.Fatalf("results %x %x, errors %v %v", a, b, err1, err2)
	}
}
