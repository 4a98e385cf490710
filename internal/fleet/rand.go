package fleet

// rng is SplitMix64: tiny, fast, and fixed here, so a seed names the same
// fleet whatever the Go version (math/rand's streams are not promised to
// stay the same).
type rng struct{ state uint64 }

func newRand(seed uint64) *rng { return &rng{state: seed} }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// intn returns a number in [0, n). The modulo bias is below 2^-40 for the
// small n used here.
func (r *rng) intn(n int) int {
	return int(r.next() % uint64(n))
}
