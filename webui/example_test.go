package webui_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/sparkrpc/sparkrpc/webui"
)

// A node manager's UI, with the shared secret required: a request without
// it gets 401, one with it the containers as JSON.
func ExampleNewNodeManagerUI() {
	containers := func() []webui.Container {
		return []webui.Container{{ID: "container_1_0001_01_000002", AppID: "application_1_0001", PID: 4242, MemoryMB: 1024, Cores: 1}}
	}
	ui := webui.NewNodeManagerUI("node-1:45454", containers, webui.WithSecret("s3cret"))

	req := httptest.NewRequest("GET", "/api/v1/containers", nil)
	rec := httptest.NewRecorder()
	ui.ServeHTTP(rec, req)
	fmt.Println(rec.Code)

	req.Header.Set("Authorization", "Bearer s3cret")
	rec = httptest.NewRecorder()
	ui.ServeHTTP(rec, req)
	fmt.Println(rec.Code)
	fmt.Print(rec.Body.String())
	// Output:
	// 401
	// 200
	// [
	//   {
	//     "id": "container_1_0001_01_000002",
	//     "appId": "application_1_0001",
	//     "pid": 4242,
	//     "totalMemoryNeededMB": 1024,
	//     "totalVCoresNeeded": 1,
	//     "containerLogsLink": ""
	//   }
	// ]
}
