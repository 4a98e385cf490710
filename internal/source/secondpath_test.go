package source_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/bench/benchtest"
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
	type input struct {
		files []fleet.File
		size  int64
	}
	prepare := func(b *testing.B, vms int, _ string, files []fleet.File) input {
		in, fast := input{files: files}, 0
		for _, f := range files {
			in.size += int64(len(f.Data))
			if _, ok := source.FastParse(f.Data); ok {
				fast++
			}
		}
		b.Logf("%d VMs: the fast parser takes %d of %d files (the others, such as the catalog's networks, go to yaml.v3)", vms, fast, len(files))
		return in
	}
	benchtest.Compare(b, prepare,
		benchtest.Path[input]{Name: "fast", Run: func(b *testing.B, in input) {
			b.SetBytes(in.size)
			for b.Loop() {
				for _, f := range in.files {
					if _, ok := source.FastParse(f.Data); !ok {
						v3(b, f.Data) // as Parse does
					}
				}
			}
		}},
		benchtest.Path[input]{Name: "yaml.v3", Run: func(b *testing.B, in input) {
			b.SetBytes(in.size)
			for b.Loop() {
				for _, f := range in.files {
					v3(b, f.Data)
				}
			}
		}})
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
