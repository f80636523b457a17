// Command sumofsquares is a sparkrpc program of its own, in a module of its
// own: the application SumOfSquares prints the sum of the squares of its
// integer arguments, each square computed by a task on an executor.
//
// Build it and submit it as spark-submit submits a jar; the program is the
// primary resource, and on a cluster it is what every container runs:
//
//	go build -o sumofsquares .
//	sparkrpc submit --class SumOfSquares --master 'local-cluster[2,1,1024]' ./sumofsquares 1 2 3
//	./sumofsquares submit --master 'local[2]' ./sumofsquares 1 2 3
//
// Both print "Sum of squares is 14".
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/endpoints"
	"github.com/sparkrpc/sparkrpc/launcher"
)

// squareTask is the name of the task function that squares one number.
const squareTask = "sumofsquares.square"

func main() {
	cluster.RegisterApp("SumOfSquares", sumOfSquares)
	endpoints.RegisterTask(squareTask, square)
	os.Exit(launcher.Run(os.Args[1:]))
}

// sumOfSquares squares each argument in a task of its own and prints the sum.
func sumOfSquares(ctx context.Context, sc *cluster.AppContext, args []string) error {
	payloads := make([][]byte, len(args))
	for i, a := range args {
		n, err := strconv.ParseInt(a, 10, 32)
		if err != nil {
			return fmt.Errorf("SumOfSquares: %q is not an integer", a)
		}
		payloads[i] = binary.BigEndian.AppendUint64(nil, uint64(n))
	}
	d, err := sc.Driver(ctx)
	if err != nil {
		return err
	}
	var sum int64
	if len(payloads) > 0 {
		results, err := d.RunJob(ctx, squareTask, payloads)
		if err != nil {
			return err
		}
		for _, r := range results {
			if len(r) != 8 {
				return errors.New("SumOfSquares: malformed task result")
			}
			sum += int64(binary.BigEndian.Uint64(r))
		}
	}
	sc.Printf("Sum of squares is %d\n", sum)
	return nil
}

// square returns the square of the number in payload.
func square(_ context.Context, _ endpoints.TaskContext, payload []byte) ([]byte, error) {
	if len(payload) != 8 {
		return nil, errors.New("SumOfSquares: malformed task")
	}
	n := int64(binary.BigEndian.Uint64(payload))
	return binary.BigEndian.AppendUint64(nil, uint64(n*n)), nil
}
