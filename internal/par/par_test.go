package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 8} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 3, 1000} {
			calls := make([]atomic.Int32, n)
			For(n, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Errorf("GOMAXPROCS %d, n %d: index %d called %d times", procs, n, i, c)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

func TestChunksCoverEveryItem(t *testing.T) {
	for _, c := range []struct{ n, size, pieces int }{{0, 10, 0}, {1, 10, 1}, {10, 10, 1}, {11, 10, 2}, {25, 0, 25}} {
		pieces, bounds := Chunks(c.n, c.size)
		if pieces != c.pieces {
			t.Errorf("Chunks(%d, %d): %d pieces, want %d", c.n, c.size, pieces, c.pieces)
		}
		next := 0
		for i := range pieces {
			lo, hi := bounds(i)
			if lo != next || hi <= lo {
				t.Errorf("Chunks(%d, %d): piece %d is [%d, %d), want to start at %d", c.n, c.size, i, lo, hi, next)
			}
			next = hi
		}
		if next != c.n {
			t.Errorf("Chunks(%d, %d): pieces end at %d", c.n, c.size, next)
		}
	}
}
