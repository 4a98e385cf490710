package source_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/bench"
	"github.com/virtc/virtc/internal/fleet"
	"github.com/virtc/virtc/internal/source"
)

// BenchmarkSecondPath is what the fast parser (fast.go) still saves over
// yaml.v3, which every input outside its subset goes through: the files
// of make bench's fleet, parsed as Parse does (the fast parser, yaml.v3
// for what it declines) and by yaml.v3 alone, into the same nodes
// (TestFastParseMatchesYAML holds them equal). BENCHMARKS.md "Second
// paths" records it.
func BenchmarkSecondPath(b *testing.B) {
	for _, vms := range []int{100, 1000} {
		files, err := fleet.Write(b.TempDir(), bench.FleetOptions(vms))
		if err != nil {
			b.Fatal(err)
		}
		size, fast := 0, 0
		for _, f := range files {
			size += len(f.Data)
			if _, ok := source.FastParse(f.Data); ok {
				fast++
			}
		}
		b.Logf("%d VMs: the fast parser takes %d of %d files (the others, such as the catalog's networks, go to yaml.v3)", vms, fast, len(files))
		b.Run(fmt.Sprintf("vms=%d/fast", vms), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, f := range files {
					if _, ok := source.FastParse(f.Data); !ok {
						v3(b, f.Data) // as Parse does
					}
				}
			}
		})
		b.Run(fmt.Sprintf("vms=%d/yaml.v3", vms), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, f := range files {
					v3(b, f.Data)
				}
			}
		})
	}
}

// v3 parses data with yaml.v3 as Parse does without the fast parser.
func v3(b *testing.B, data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			b.Fatal(err)
		}
	}
}
