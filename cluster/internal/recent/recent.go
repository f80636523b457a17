// A map of the keys put last.

package recent

// Map holds the values of the last Max keys put, forgetting the oldest
// first. Its zero value holds nothing; it is not safe for concurrent use.
type Map[K comparable, V any] struct {
	// Max is how many keys it keeps (at least 1 is kept).
	Max   int
	m     map[K]V
	order []K // the keys of m, oldest first
}

// Put sets k's value; a new k may make the oldest key go.
func (r *Map[K, V]) Put(k K, v V) {
	if r.m == nil {
		r.m = make(map[K]V)
	}
	if _, ok := r.m[k]; !ok {
		r.order = append(r.order, k)
	}
	r.m[k] = v
	if n := len(r.order) - max(r.Max, 1); n > 0 {
		for _, old := range r.order[:n] {
			delete(r.m, old)
		}
		clear(r.order[:n])
		r.order = r.order[n:] // append moves the rest to a new array as it grows
	}
}

// Get returns k's value, if k is kept.
func (r *Map[K, V]) Get(k K) (V, bool) {
	v, ok := r.m[k]
	return v, ok
}

// Len is the number of keys kept.
func (r *Map[K, V]) Len() int { return len(r.m) }
