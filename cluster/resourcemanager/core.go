package resourcemanager

// This file holds the resource manager core's state: its nodes,
// applications and containers, and the actions it asks the endpoint for.

import (
	"fmt"
	"time"

	"github.com/sparkrpc/sparkrpc/cluster"
	"github.com/sparkrpc/sparkrpc/messages"
)

// rmCore is the resource manager's state machine and scheduler. It does no
// I/O: every operation returns the actions (start or stop a container on a
// node, remove a staging folder) that the resource manager endpoint carries
// out. It is not safe for concurrent use; the endpoint serialises calls.
type rmCore struct {
	clusterTimestamp int64
	nextApp          int
	queues           map[string]bool
	now              func() time.Time
	nodes            map[string]*rmNode
	nodeOrder        []string
	apps             map[string]*rmApp
	appOrder         []string
	amStopGrace      time.Duration
	amExpiry         time.Duration // an AM silent this long fails its application
	// ended holds the ids of the ended applications in the order they
	// ended; past maxCompleted of them the oldest, once no node holds a
	// container of theirs, are forgotten (pruneEnded).
	ended        []string
	maxCompleted int
	// nodeRetention is how long a lost or shut-down node stays listed
	// before it is forgotten (checkNodes).
	nodeRetention time.Duration
	// amNodes are reserved for application masters: AM containers go there
	// first, executor containers never.
	amNodes map[string]bool
}

type rmNode struct {
	id, address, host string
	capability, used  cluster.Resource
	containers        map[string]*rmContainer
	lastSeen          time.Time
	lost              bool      // lost, or shut down: it runs nothing
	inactiveSince     time.Time // when it was lost or shut down
	shutdown          bool      // it said it was shutting down (NmUnregister)
}

type rmContainer struct {
	id       string
	app      *rmApp
	node     *rmNode
	resource cluster.Resource
	am       bool
	launched bool // its start was asked of its node manager
	// releasedAt is when its application master gave it back; its node's
	// heartbeats kill it once releasedKillAfter has passed since.
	releasedAt time.Time
}

type rmApp struct {
	id, name, queue, user string
	seq                   int
	state                 cluster.AppState
	final                 cluster.FinalStatus
	diagnostics           string
	start, finish         time.Time
	amResource            cluster.Resource
	amLaunch              *messages.RmLaunchContext
	amContainer           *rmContainer
	amHost, driverURL     string
	trackingURL           string // the driver's web UI, from the AM's registration
	historyURL            string // its page on a history server once it has ended; from the AM's registration
	amRef                 *messages.EndpointRef
	amStopAt              time.Time
	amSeen                time.Time // when its AM was last heard from, or its container launched
	unmanagedDriver       bool
	nextContainer         int
	pending               int
	// lastReply is the last AmAllocate reply (number lastReplyID) to an
	// AM that tracks replies (AmAllocate.expected_response_id): an ask
	// that expects it again did not get it, and gets what it carried.
	lastReply             *messages.AmAllocateResponse
	lastReplyID           int64
	pendingResource       cluster.Resource
	containers            map[string]*rmContainer
	completed             []*messages.RmContainerStatus
	tasksTotal, tasksDone int32
	tasksRunning          int32
	amLogDir              string
	staged                bool // it has a staging folder
	// creator and creatorIdentity are the user and the peer identity
	// ("" for this env) that created the application: only they stage its
	// resources.
	creator, creatorIdentity string
	// creatorAddress is the address of the creator's connection: once it
	// closes, nobody may stage for the application any more.
	creatorAddress string
	// resources are the staged resources its submission named, which
	// every container of the application gets.
	resources []*messages.RmLocalResource
	// secret is the application's secret (spark.authenticate), in memory
	// only, until the application ends; acls its ACLs.
	secret []byte
	acls   *messages.RmAppAcls
}

type actionKind int

const (
	actStartContainer actionKind = iota + 1
	actStopContainer
	actRemoveStaging
	actForgetSecret
)

// rmAction is an effect the endpoint must carry out.
type rmAction struct {
	kind        actionKind
	nodeAddress string
	appID       string
	start       *messages.NmStartContainer
	stop        *messages.NmStopContainer
}

func newRMCore(clusterTimestamp int64, queues []string, now func() time.Time) *rmCore {
	q := make(map[string]bool)
	for _, name := range queues {
		q[name] = true
	}
	if len(q) == 0 {
		q["default"] = true
	}
	return &rmCore{
		clusterTimestamp: clusterTimestamp,
		queues:           q,
		now:              now,
		nodes:            make(map[string]*rmNode),
		apps:             make(map[string]*rmApp),
		amStopGrace:      10 * time.Second,
		amExpiry:         DefaultAMExpiry,
		maxCompleted:     DefaultMaxCompletedApps,
		nodeRetention:    DefaultInactiveNodeRetention,
		amNodes:          make(map[string]bool),
	}
}

// maxResource is the capability of the largest live node (memory and cores
// taken separately, as YARN's maximum allocation).
func (c *rmCore) maxResource() cluster.Resource {
	return c.maxAmong(func(_ string, n *rmNode) bool { return !n.lost })
}

// maxExecutorResource is maxResource among the nodes executor containers
// may go to (not those reserved for application masters): the live ones,
// or with listed also those lost or shut down that are still listed, which
// may come back.
func (c *rmCore) maxExecutorResource(listed bool) cluster.Resource {
	return c.maxAmong(func(id string, n *rmNode) bool { return !c.amNodes[id] && (listed || !n.lost) })
}

// maxAmong is the largest memory and the most cores of the nodes that
// count says to count.
func (c *rmCore) maxAmong(count func(id string, n *rmNode) bool) cluster.Resource {
	var m cluster.Resource
	for id, n := range c.nodes {
		if count(id, n) {
			m.MemoryMB = max(m.MemoryMB, n.capability.MemoryMB)
			m.Cores = max(m.Cores, n.capability.Cores)
		}
	}
	return m
}

func (c *rmCore) liveNodes() int {
	k := 0
	for _, n := range c.nodes {
		if !n.lost {
			k++
		}
	}
	return k
}

func (c *rmCore) app(id string) (*rmApp, error) {
	a, ok := c.apps[id]
	if !ok {
		return nil, fmt.Errorf("%w: Application with id '%s' doesn't exist in RM", cluster.ErrUnknownAppID, id)
	}
	return a, nil
}

// DefaultMaxCompletedApps is how many ended applications a resource
// manager keeps by default (Config.MaxCompletedApps), YARN's
// yarn.resourcemanager.max-completed-applications.
const DefaultMaxCompletedApps = 1000

// DefaultInactiveNodeRetention is how long a resource manager lists a
// lost or shut-down node by default (Config.InactiveNodeRetention).
const DefaultInactiveNodeRetention = 10 * time.Minute

// pruneEnded forgets the oldest ended applications beyond maxCompleted,
// skipping those a node still holds a container of (an AM in its grace
// period, a container not reported complete yet): they go once it has.
// A forgotten application is unknown to reports and listings, as YARN's.
func (c *rmCore) pruneEnded() {
	excess := len(c.ended) - c.maxCompleted
	if excess <= 0 {
		return
	}
	gone := make(map[string]bool, excess)
	kept := make([]string, 0, len(c.ended))
	for _, id := range c.ended {
		a := c.apps[id]
		if a == nil || gone[id] {
			continue // ended twice: listed once
		}
		if len(gone) < excess && len(a.containers) == 0 {
			gone[id] = true
			delete(c.apps, id)
			continue
		}
		kept = append(kept, id)
	}
	if len(gone) == 0 {
		return
	}
	c.ended = kept
	// A new slice: a caller may be ranging over the old one.
	order := make([]string, 0, len(c.appOrder)-len(gone))
	for _, id := range c.appOrder {
		if !gone[id] {
			order = append(order, id)
		}
	}
	c.appOrder = order
}
