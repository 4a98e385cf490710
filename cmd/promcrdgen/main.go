// Command promcrdgen vendors prometheus-operator's PrometheusRule,
// ServiceMonitor and AlertmanagerConfig CRDs, the kinds of virtc's monitoring objects, into
// test/schemas/prometheus-operator: the CRD YAMLs verbatim (crd-yaml/, which
// the conformance test installs into its API server) and each served
// version's openAPIV3Schema as kubeconform's JSON schema (crds/<group>/
// <kind>_<version>.json, with additionalProperties false on every object
// below the root that has properties and no additionalProperties: the
// datreeio CRDs-catalog convention of the shared schemas folder).
//
// The CRDs come from the root module of prometheus-operator at Version,
// fetched with `go mod download` (example/prometheus-operator-crd/).
// `make generate` runs it.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// The module and version the CRDs come from: the only version of the root
// module the Go module proxy serves (OpenShift 4.22's monitoring stack
// runs a prometheus-operator of the same API: monitoring.coreos.com/v1
// PrometheusRule, v1alpha1 AlertmanagerConfig).
const (
	Module  = "github.com/prometheus-operator/prometheus-operator"
	Version = "v0.85.0"
	CRDDir  = "example/prometheus-operator-crd"
)

// Files are the CRDs vendored.
var Files = []string{
	"monitoring.coreos.com_prometheusrules.yaml",
	"monitoring.coreos.com_servicemonitors.yaml",
	"monitoring.coreos.com_alertmanagerconfigs.yaml",
}

func main() {
	out := flag.String("out", "test/schemas/prometheus-operator", "the folder to write")
	vendored := flag.String("vendored", "", "instead: convert the CRD YAMLs kept in DIR/crd-yaml (their storage version) into DIR/crds, for CRDs whose module the proxy does not serve (test/schemas/argocd-operator)")
	flag.Parse()
	run := func() error { return run(*out) }
	if *vendored != "" {
		run = func() error { return convertVendored(*vendored) }
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "promcrdgen:", err)
		os.Exit(1)
	}
}

// convertVendored writes kubeconform's schema of the storage version of
// each CRD in dir/crd-yaml into dir/crds.
func convertVendored(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "crd-yaml", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRD YAML in %s/crd-yaml (%v)", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := writeSchemas(dir, f, data, true); err != nil {
			return err
		}
	}
	return nil
}

func run(out string) error {
	dir, err := download()
	if err != nil {
		return err
	}
	for _, name := range Files {
		data, err := os.ReadFile(filepath.Join(dir, CRDDir, name))
		if err != nil {
			return err
		}
		if err := write(filepath.Join(out, "crd-yaml", name), data); err != nil {
			return err
		}
		if err := writeSchemas(out, name, data, false); err != nil {
			return err
		}
	}
	return nil
}

// writeSchemas writes kubeconform's schemas of the CRD data (of its
// storage version only, or of every served one) into dir/crds; file names
// the CRD in an error.
func writeSchemas(dir, file string, data []byte, storageOnly bool) error {
	schemas, err := schemasOf(data, storageOnly)
	if err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	for path, schema := range schemas {
		if err := write(filepath.Join(dir, "crds", path), schema); err != nil {
			return err
		}
	}
	return nil
}

// crd is the part of a CustomResourceDefinition the schemas come from.
type crd struct {
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Versions []struct {
			Name    string `json:"name"`
			Served  bool   `json:"served"`
			Storage bool   `json:"storage"`
			Schema  struct {
				OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// schemasOf converts the served versions of a CRD, or its storage version
// only, into kubeconform's JSON schemas, by path
// (<group>/<kind>_<version>.json).
func schemasOf(data []byte, storageOnly bool) (map[string][]byte, error) {
	var c crd
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, v := range c.Spec.Versions {
		if !v.Served || storageOnly && !v.Storage {
			continue
		}
		s := v.Schema.OpenAPIV3Schema
		if s == nil {
			return nil, fmt.Errorf("version %s has no openAPIV3Schema", v.Name)
		}
		closeObjects(s, true)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		if err := enc.Encode(s); err != nil {
			return nil, err
		}
		out[filepath.Join(c.Spec.Group, strings.ToLower(c.Spec.Names.Kind)+"_"+v.Name+".json")] = buf.Bytes()
	}
	return out, nil
}

// closeObjects sets additionalProperties false on every object schema
// below the root with properties and no additionalProperties.
func closeObjects(s map[string]any, root bool) {
	if props, ok := s["properties"].(map[string]any); ok {
		if _, set := s["additionalProperties"]; !set && !root {
			s["additionalProperties"] = false
		}
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				closeObjects(m, false)
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		closeObjects(items, false)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		closeObjects(ap, false)
	}
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// download runs `go mod download` for the module and returns its folder.
func download() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", Module+"@"+Version)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var info struct{ Dir, Error string }
	_ = json.Unmarshal(stdout.Bytes(), &info)
	if err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %v %s%s", Module, Version, err, info.Error, stderr.String())
	}
	return info.Dir, nil
}
