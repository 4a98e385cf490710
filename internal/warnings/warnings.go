// Package warnings writes a build's warnings as a ConfigMap, so that they
// reach where an Argo CD user looks: the Application's resources (docs/argocd.md,
// "Where warnings appear").
package warnings

import (
	"errors"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/emit"
)

// WarningsKey and CountKey are the data keys of the warnings ConfigMap.
const (
	WarningsKey = "warnings"
	CountKey    = "count"
)

// Check checks a NAMESPACE/NAME reference of the ConfigMap.
func Check(ref string) error {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return errors.New("want NAMESPACE/NAME")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return errors.New("namespace: " + strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return errors.New("name: " + strings.Join(errs, "; "))
	}
	return nil
}

// Append appends to a build's output a ConfigMap that
// lists its warnings, one a line as on stderr (file:line:col: field:
// message, sorted, repeats condensed), and their number. It is written
// even without warnings, so that fixing the last one empties it in the
// cluster instead of leaving it stale; its bytes depend only on the
// warnings, so the output stays deterministic. Argo CD shows it among the
// Application's resources (docs/argocd.md, "Where warnings appear").
func Append(out []byte, ref string, sorted []diag.Diagnostic) []byte {
	doc := Doc(ref, sorted)
	if len(out) == 0 {
		return doc
	}
	return append(append(append([]byte{}, out...), "---\n"...), doc...)
}

// Doc is the warnings ConfigMap that Append appends, as one YAML document
// (for a build that writes its output in chunks: after a non-empty output,
// "---\n" and then Doc).
func Doc(ref string, sorted []diag.Diagnostic) []byte {
	ns, name, _ := strings.Cut(ref, "/")
	var warnings []diag.Diagnostic
	for _, d := range sorted {
		if d.Severity == diag.Warning {
			warnings = append(warnings, d)
		}
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: ns,
			Labels:    map[string]string{"app.kubernetes.io/managed-by": "virtc", "app.kubernetes.io/component": "warnings"},
		},
		Data: map[string]string{CountKey: strconv.Itoa(len(warnings)), WarningsKey: diag.Format(warnings)},
	}
	doc, err := emit.Write([]emit.Object{{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name, Body: cm}})
	if err != nil {
		panic(err) // a ConfigMap of strings always encodes
	}
	return doc
}
