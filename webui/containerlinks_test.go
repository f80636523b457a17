package webui_test

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"sync"
	"testing"

	"github.com/sparkrpc/sparkrpc/webui"
)

// The containers page's log links reach the log of their container's
// owner whatever the owner's name holds: a Kerberos-style principal
// ("alice/admin"), a '?', a '#' or a '%'. Each part of the path is escaped,
// as the SPARK_LOG_URL_* links the node manager gives its containers are
// (nodemanager.ContainerLogURL). Before, the names went into the link as
// they were: "alice/admin" made a link of one segment too many (404), and
// "a?b" cut the path at the '?'.
func TestContainerLogLinksEscapeTheOwner(t *testing.T) {
	var mu sync.Mutex
	var owners []string
	read := func(id, owner, file, requester string, start int64) (webui.ContainerLog, error) {
		mu.Lock()
		owners = append(owners, owner)
		mu.Unlock()
		return webui.ContainerLog{Data: []byte("log of " + owner)}, nil
	}
	users := []string{"alice/admin", "a?b", "c#d", "e%2Ff", "g%h"}
	var cs []webui.Container
	for i, u := range users {
		cs = append(cs, webui.Container{ID: fmt.Sprintf("container_1_0001_01_%06d", i+2), AppID: "application_1_0001", User: u, PID: 1})
	}
	base := serve(t, webui.NewNodeManagerUI("node-1", func() []webui.Container { return cs }, webui.WithContainerLogs(read))).URL
	_, page := get(t, base+"/", "")
	links := regexp.MustCompile(`href="(/node/containerlogs/[^"]*/stdout[^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(links) != len(users) {
		t.Fatalf("%d stdout links, want %d:\n%s", len(links), len(users), page)
	}
	for i, l := range links {
		link := html.UnescapeString(l[1])
		mu.Lock()
		owners = owners[:0]
		mu.Unlock()
		code, body := get(t, base+link, "")
		mu.Lock()
		got := append([]string(nil), owners...)
		mu.Unlock()
		if code != http.StatusOK || len(got) != 1 || got[0] != users[i] {
			t.Errorf("the stdout link of %q's container, %s: %d %q, read for owners %q", users[i], link, code, body, got)
		}
	}
}
