package endpoints

import "testing"

type ptrAllocator struct{ _ int } // not zero-sized: two of them are different pointers

func (*ptrAllocator) ExecutorLost(string, string) {}

type valueAllocator struct{ name string }

func (valueAllocator) ExecutorLost(string, string) {}

// mapAllocator cannot be compared with ==: it holds a map.
type mapAllocator struct{ seen map[string]string }

func (mapAllocator) ExecutorLost(string, string) {}

func TestSameAllocator(t *testing.T) {
	p, q := &ptrAllocator{}, &ptrAllocator{}
	m := mapAllocator{seen: map[string]string{}}
	for _, tc := range []struct {
		name string
		a, b ExecutorAllocator
		want bool
	}{
		{"nil", nil, nil, false},
		{"one nil", p, nil, false},
		{"same pointer", p, p, true},
		{"other pointer", p, q, false},
		{"equal values", valueAllocator{"a"}, valueAllocator{"a"}, true},
		{"different values", valueAllocator{"a"}, valueAllocator{"b"}, false},
		{"different types", valueAllocator{"a"}, p, false},
		{"uncomparable", m, m, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sameAllocator(tc.a, tc.b); got != tc.want {
				t.Fatalf("sameAllocator(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
