// Command k8sschemagen writes kubeconform's strict, stand-alone JSON
// Schemas of Kubernetes kinds from the Kubernetes OpenAPI (swagger.json of
// the kubernetes repository, api/openapi-spec, at the version's tag; `go
// mod download k8s.io/kubernetes@<version>` fetches it). It does what
// yannh/openapi2jsonschema does with --expanded --kubernetes --stand-alone
// --strict (the converter of the shared schemas-upstream folder, see its
// SOURCES.md): references inlined, additionalProperties false on every
// object with properties, int-or-string and quantities as oneOf, optional
// fields nullable, apiVersion and kind limited to the kind's. Its test
// checks that it reproduces the shared folder's files.
//
//	go run ./cmd/k8sschemagen -swagger <kubernetes>/api/openapi-spec/swagger.json \
//	  -out test/schemas/4.22/k8s/v1.35.8-standalone-strict \
//	  io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy ...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/virtc/virtc/cmd/k8sschemagen/internal/convert"
)

func main() {
	swagger := flag.String("swagger", "", "the Kubernetes swagger.json")
	out := flag.String("out", "", "the folder to write the schemas into")
	flag.Parse()
	if *swagger == "" || *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: k8sschemagen -swagger swagger.json -out dir definition...")
		os.Exit(2)
	}
	if err := run(*swagger, *out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschemagen:", err)
		os.Exit(1)
	}
}

func run(swagger, out string, titles []string) error {
	defs, err := convert.ReadDefinitions(swagger)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, title := range titles {
		name, data, err := convert.Schema(defs, title)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out+"/"+name, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
