package examples

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
)

// SparkPiTask is the name of SparkPi's task function.
const SparkPiTask = "examples.SparkPi.sample"

// KeySparkPiTaskDelay makes each SparkPi task last at least this long.
const KeySparkPiTaskDelay = "spark.examples.sparkPi.taskDelay"

// samplesPerSlice is SparkPi's points per partition (Spark's 100000).
const samplesPerSlice = 100000

func init() {
	cluster.RegisterApp("SparkPi", SparkPi)
	endpoints.RegisterTask(SparkPiTask, samplePi)
}

// SparkPi estimates π: args[0] is the number of partitions (default 2).
func SparkPi(ctx context.Context, sc *cluster.AppContext, args []string) error {
	slices := 2
	if len(args) > 0 {
		n, err := strconv.Atoi(args[0])
		if err != nil || n < 1 {
			return fmt.Errorf("SparkPi: the number of slices must be a positive integer, not %q", args[0])
		}
		slices = n
	}
	delay, err := sc.Conf().GetDuration(KeySparkPiTaskDelay, "0", time.Millisecond)
	if err != nil {
		return err
	}
	d, err := sc.Driver(ctx)
	if err != nil {
		return err
	}
	payloads := make([][]byte, slices)
	for i := range payloads {
		payloads[i] = encodePiTask(i, samplesPerSlice, delay)
	}
	results, err := d.RunJob(ctx, SparkPiTask, payloads)
	if err != nil {
		return err
	}
	var count, n uint64
	for _, r := range results {
		if len(r) != 8 {
			return errors.New("SparkPi: malformed task result")
		}
		count += binary.BigEndian.Uint64(r)
		n += samplesPerSlice
	}
	sc.Printf("Pi is roughly %v\n", 4.0*float64(count)/float64(n))
	return nil
}

func encodePiTask(partition, samples int, delay time.Duration) []byte {
	b := make([]byte, 24)
	binary.BigEndian.PutUint64(b, uint64(partition))
	binary.BigEndian.PutUint64(b[8:], uint64(samples))
	binary.BigEndian.PutUint64(b[16:], uint64(delay))
	return b
}

// samplePi counts the random points of the square [-1,1]² that fall in the
// unit circle, from a generator seeded with the partition.
func samplePi(ctx context.Context, _ endpoints.TaskContext, payload []byte) ([]byte, error) {
	if len(payload) != 24 {
		return nil, errors.New("SparkPi: malformed task")
	}
	partition := binary.BigEndian.Uint64(payload)
	samples := binary.BigEndian.Uint64(payload[8:])
	delay := time.Duration(binary.BigEndian.Uint64(payload[16:]))
	start := time.Now()
	rng := rand.New(rand.NewPCG(partition, 0x5eed))
	var inside uint64
	for i := uint64(0); i < samples; i++ {
		x, y := rng.Float64()*2-1, rng.Float64()*2-1
		if x*x+y*y <= 1 {
			inside++
		}
	}
	if rest := delay - time.Since(start); rest > 0 {
		t := time.NewTimer(rest)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := make([]byte, 8)
	binary.BigEndian.PutUint64(out, inside)
	return out, nil
}
