// Command virtc compiles VM intents and a catalog into OpenShift
// Virtualization manifests.
package main

import (
	"os"

	"github.com/virtc/virtc/internal/cli"
	// Answers a cached `virtc cmp` call before the rest is initialised.
	_ "github.com/virtc/virtc/internal/cmp/hit"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
