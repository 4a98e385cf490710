// Package par runs independent pieces of a stage on all CPUs. Callers
// write each piece's result into its own slot and assemble the slots in
// order afterwards, so the output does not depend on scheduling.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(i) for every i in [0, n), on up to GOMAXPROCS goroutines,
// and returns when all calls have returned. Small n run on the caller's
// goroutine.
func For(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}

// Chunks splits n items into pieces of about size items for For: it
// returns the number of pieces and the bounds of piece i.
func Chunks(n, size int) (int, func(i int) (lo, hi int)) {
	size = max(size, 1)
	pieces := (n + size - 1) / size
	return pieces, func(i int) (int, int) { return i * size, min((i+1)*size, n) }
}
