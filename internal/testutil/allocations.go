package testutil

// allocations.go holds AllocatedBytes and LiveHeap, the memory a piece of
// code costs as the runtime counts it.

import "runtime"

// AllocatedBytes returns the bytes the process allocates while fn runs,
// counted from a fresh collection: what fn allocates, plus what other
// goroutines allocate meanwhile.
func AllocatedBytes(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// LiveHeap returns the bytes of live heap objects after a collection: the
// difference of two readings is what the code between them keeps.
func LiveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
