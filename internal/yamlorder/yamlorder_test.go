package yamlorder

import (
	"math/rand/v2"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// mixed are keys on which yaml.v2's keyList.Less is not transitive:
// net1b < net6 < net16 < net1b and 16b < 1c < 6b < 16b.
var mixed = []string{"net1b", "net6", "net16", "16b", "1c", "6b"}

// shuffled builds the map with the keys inserted in a random order (Go's
// map iteration order is random anyway; this varies the buckets too).
func shuffled(r *rand.Rand, keys []string) map[string]any {
	ks := append([]string(nil), keys...)
	r.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
	m := map[string]any{}
	for _, k := range ks {
		m[k] = map[string]any{"v": len(k), "labels": map[string]any{k: "x", "app": "y"}}
	}
	return m
}

func TestMixedKeysAreWrittenInOneOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var first string
	for i := range 500 {
		m := shuffled(r, mixed)
		for k := range m {
			m[k] = 1
		}
		out, err := Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = string(out)
			continue
		}
		if string(out) != first {
			t.Fatalf("run %d:\n%s\nrun 0:\n%s", i, out, first)
		}
	}
	// Bytes first, then stably by yaml.v2's Less: this is the one order.
	want := "16b: 1\n1c: 1\n6b: 1\nnet16: 1\nnet1b: 1\nnet6: 1\n"
	if first != want {
		t.Errorf("got\n%s\nwant\n%s", first, want)
	}
	// The test has teeth: yaml.v2 itself writes these keys in more than one
	// order.
	seen := map[string]bool{}
	for range 500 {
		out, err := sigsyaml.Marshal(shuffled(r, mixed))
		if err != nil {
			t.Fatal(err)
		}
		seen[string(out)] = true
	}
	if len(seen) < 2 {
		t.Errorf("sigs.k8s.io/yaml wrote the mixed keys in one order only: the defect this package works around is gone; the package can go")
	}
}

// Wherever yaml.v2's order is well defined (Less is a strict weak ordering
// on the keys), JSONToYAML writes exactly what sigs.k8s.io/yaml writes:
// random key sets of digits, letters and punctuation, keys that are
// labels, the list in the package comment. Elsewhere it still writes one
// order for every insertion order.
func TestSameAsSigsYAMLWhereItsOrderIsDefined(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab01269-./Zé٣")
	defined, undefined := 0, 0
	for i := range 3000 {
		set := map[string]bool{}
		for range 1 + r.IntN(7) {
			var b strings.Builder
			for range 1 + r.IntN(4) {
				b.WriteRune(alphabet[r.IntN(len(alphabet))])
			}
			set[b.String()] = true
		}
		if i%10 == 0 {
			for _, k := range mixed[:3] {
				set[k] = true
			}
		}
		var keys []string
		for k := range set {
			keys = append(keys, k)
		}
		ours, err := Marshal(shuffled(r, keys))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := Marshal(shuffled(r, keys))
		if string(ours) != string(again) {
			t.Fatalf("keys %q: two orders:\n%s\n%s", keys, ours, again)
		}
		if !Defined(keys) {
			undefined++
			continue
		}
		defined++
		theirs, err := sigsyaml.Marshal(shuffled(r, keys))
		if err != nil {
			t.Fatal(err)
		}
		if string(ours) != string(theirs) {
			t.Errorf("keys %q:\nyamlorder:\n%s\nsigs.k8s.io/yaml:\n%s", keys, ours, theirs)
		}
	}
	if defined < 1000 || undefined < 100 {
		t.Errorf("defined %d, undefined %d key sets: the test does not cover both", defined, undefined)
	}
	t.Logf("defined %d, undefined %d", defined, undefined)
}

// Kubernetes label keys as virtc imports them keep the order yaml.v2 gives
// them.
func TestOrdinaryKeys(t *testing.T) {
	keys := []string{"app.kubernetes.io/name", "app.kubernetes.io/part-of", "kubevirt.io/domain", "vm.kubevirt.io/name", "tier", "a10", "a9", "10", "9", "B", "a", "", "-", "node-role.kubernetes.io/worker", "topology.kubernetes.io/zone"}
	r := rand.New(rand.NewPCG(3, 4))
	want, _ := sigsyaml.Marshal(shuffled(r, keys))
	for i := range 100 {
		got, err := Marshal(shuffled(r, keys))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("run %d:\n%s\nsigs.k8s.io/yaml:\n%s", i, got, want)
		}
	}
}
