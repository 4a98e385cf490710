// Command schemagen writes the JSON Schemas of the virtc kinds (make
// generate): it reads the doc comments of api and the decoder's field
// rules, and writes one schema per kind and virtc.json into schemas/.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/virtc/virtc/internal/schema"
)

func main() {
	api := flag.String("api", "api", "the directory of the Go source of the virtc kinds")
	out := flag.String("out", "schemas", "the directory to write the schemas into")
	flag.Parse()
	if err := schema.Write(*api, *out); err != nil {
		fmt.Fprintf(os.Stderr, "schemagen: %v\n", err)
		os.Exit(1)
	}
}
