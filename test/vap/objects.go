package vap

import (
	"fmt"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Split parses a YAML stream into objects.
func Split(data []byte) ([]map[string]any, error) {
	var out []map[string]any
	for _, doc := range strings.Split("\n"+string(data), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, err
		}
		if m != nil {
			out = append(out, m)
		}
	}
	return out, nil
}

// Policies compiles the ValidatingAdmissionPolicies of an output, by the
// tenant (namespace) they guard.
func Policies(objs []map[string]any) (map[string]*Policy, error) {
	out := map[string]*Policy{}
	for _, o := range objs {
		if o["kind"] != "ValidatingAdmissionPolicy" {
			continue
		}
		var p admissionv1.ValidatingAdmissionPolicy
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, &p); err != nil {
			return nil, err
		}
		c, err := Compile(&p)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", p.Name, err)
		}
		out[p.Spec.MatchConstraints.NamespaceSelector.MatchLabels["virtc.dev/tenant"]] = c
	}
	return out, nil
}
