package endpoints_test

import (
	"context"
	"testing"

	"github.com/sparkrpc/sparkrpc/endpoints"
)

func TestRegisterTaskPanicsOnDuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	endpoints.RegisterTask(endpoints.EchoTaskName, func(context.Context, endpoints.TaskContext, []byte) ([]byte, error) { return nil, nil })
}
