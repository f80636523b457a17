package actor

import cmap "github.com/orcaman/concurrent-map"

func init() {
	// protoactor's process registry is 1,024 concurrent maps. With the
	// concurrent-map library's default of 32 shards each, every actor system
	// allocates 32,768 Go maps (about 2.8 MB and several milliseconds), which
	// makes an env far heavier than it needs to be: an executor starts two.
	// The 1,024 buckets already spread the keys, so one shard per bucket
	// loses no concurrency. The count is read at every lookup, so it is set
	// here, before any actor system can exist.
	cmap.SHARD_COUNT = 1
}
