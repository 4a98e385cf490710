// Package olm runs virtc's OpenShift Virtualization and OADP installs
// through the real Operator Lifecycle Manager: operator-lifecycle-manager's
// olm-operator and catalog-operator and operator-registry's `opm serve`,
// built from the Go module proxy at the versions OpenShift 4.22 ships
// (tools/build-olm.sh), against a real kube-apiserver and
// kube-controller-manager (test/conformance). OLM's own resolver proposes
// the InstallPlans; virtc's approver (internal/approve) approves them under the
// Role virtc renders; OLM installs the CSVs. What the suite holds is what
// OLM does, not virtc's model of it (internal/versions/olm.go).
package olm

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/virtc/virtc/internal/versions"
)

// The file-based catalog the suite serves is generated from virtc's version
// table (catalog/versions/versions.yaml, internal/versions HCOChannel and
// OADPChannel): one bundle per version the table models, with the
// `replaces` and `olm.skipRange` edges the table describes, in the
// declarative config format of operator-registry v1.65.0
// (alpha/declcfg/declcfg.go: olm.package, olm.channel, olm.bundle). The
// real redhat-operators index is built the same way by Red Hat from the
// products' bundles; what this catalog holds of each bundle:
//
//   - the bundle's manifests as olm.bundle.object properties and no bundle
//     image: operator-registry serves such a bundle's objects in the Bundle
//     message (pkg/api/model_to_api.go ConvertModelBundleToAPIBundle:
//     BundlePath is the image, Object the objects), and OLM then builds the
//     InstallPlan's steps from them without an unpack Job, whose pod needs
//     a node and a registry (operator-lifecycle-manager v0.42.0
//     pkg/controller/registry/resolver/source_registry.go newOperatorFromBundle:
//     "This bundle's content is embedded within the Bundle proto message";
//     step_resolver.go NewStepsFromBundle). The real index has bundle
//     images, unpacked by a Job on a node.
//   - a ClusterServiceVersion with what OLM acts on: the name and version,
//     spec.replaces and the olm.skipRange annotation (as HCO's
//     tools/csv-merger/csv-merger.go v1.18.1 writes them: --replaces-csv-
//     version, --olm-skip-range), the install modes, the owned CRD, one
//     Deployment and its ServiceAccount's permissions. The product's CSV
//     has more Deployments and permissions (HCO v1.18.1
//     deploy/olm-catalog/community-kubevirt-hyperconverged/1.18.1/
//     manifests/kubevirt-hyperconverged-operator.v1.18.1.clusterserviceversion.yaml);
//     OLM installs each the same way.
//   - the owned CRD: HyperConverged (HCO v1.18.1 deploy/crds/hco00.crd.yaml,
//     from the shared schemas of the bundle's OpenShift minor) for
//     kubevirt-hyperconverged, DataProtectionApplication (oadp-operator
//     bundle/manifests) for redhat-oadp-operator.
//
// Install modes: OpenShift Virtualization is installed with an
// OperatorGroup targeting openshift-cnv (OpenShift documentation,
// "Installing OpenShift Virtualization by using the CLI",
// modules/virt-subscribing-cli.adoc: `targetNamespaces: [openshift-cnv]`),
// which OLM accepts only from a CSV supporting OwnNamespace
// (pkg/controller/operators/olm/operator.go transitionCSVState:
// InstallModeSet.Supports, else the CSV fails UnsupportedOperatorGroup);
// the product's CSV is built with csv-merger's --csv-overrides (the
// community build's defaults, AllNamespaces only, are for OKD, whose
// documentation uses an OperatorGroup without target namespaces). OADP's
// CSV supports OwnNamespace only (openshift/oadp-operator branch oadp-1.5
// bundle/manifests/oadp-operator.clusterserviceversion.yaml installModes).

// Package is one OLM package of the generated catalog.
type Package struct {
	// Name is the OLM package (kubevirt-hyperconverged).
	Name    string
	Channel *versions.Channel
	// More are channels beside Channel (the stable channel), by name.
	More map[string]*versions.Channel
	// Deployment is the operator Deployment of its CSVs.
	Deployment string
	// CRD returns the CRD YAML the bundle of a version owns.
	CRD func(versions.Version) ([]byte, error)
	// Readiness is the operator container's readiness probe, if its
	// bundles have one.
	Readiness map[string]any
}

// HCO is the kubevirt-hyperconverged package of a catalog whose head is
// head, each bundle owning the HyperConverged CRD of its minor from the
// shared schemas (schemas: the schemas-upstream directory).
func HCO(head versions.Version, schemas string) (Package, error) {
	ch, err := versions.HCOChannel(head)
	if err != nil {
		return Package{}, err
	}
	return Package{Name: versions.HCOChannelPackage, Channel: ch, Deployment: "hco-operator",
		CRD: func(v versions.Version) ([]byte, error) {
			return os.ReadFile(filepath.Join(schemas, v.MinorString(), "crd-yaml", "hco.kubevirt.io", "hco.kubevirt.io_hyperconvergeds.yaml"))
		},
		// HCO v1.18.1's operator (pkg/components/components.go
		// getReadinessProbe for its CSV's Deployment): the kubelet
		// reports the pod Ready 5 seconds after it started at the
		// earliest, and OLM has the CSV Installing until then.
		Readiness: map[string]any{"httpGet": map[string]any{"path": "/readyz", "port": 6060, "scheme": "HTTP"},
			"initialDelaySeconds": 5, "periodSeconds": 5, "failureThreshold": 1},
	}, nil
}

// OADP is the redhat-oadp-operator package whose head is head (1.6.0),
// each bundle owning the DataProtectionApplication CRD of the shared
// schemas of minor.
func OADP(head, minor, schemas string) (Package, error) {
	ch, err := versions.OADPChannel(head)
	if err != nil {
		return Package{}, err
	}
	return Package{Name: ch.Package, Channel: ch, Deployment: "openshift-adp-controller-manager",
		CRD: func(versions.Version) ([]byte, error) {
			return os.ReadFile(filepath.Join(schemas, minor, "crd-yaml", "oadp.openshift.io", "oadp.openshift.io_dataprotectionapplications.yaml"))
		}}, nil
}

// WriteMinorCatalog writes into dir the catalog of the redhat-operators
// index of OpenShift minor (4.22): the index a cluster of that minor has,
// whose kubevirt-hyperconverged channel ends at the newest z-stream the
// table has of the minor (versions.DefaultHead) and whose OADP channel at
// the minor's OADP release. schemas is the schemas-upstream directory.
func WriteMinorCatalog(dir, minor, schemas string) error {
	rel, v, err := versions.Lookup(minor + ".0")
	if err != nil {
		return err
	}
	hco, err := HCO(versions.DefaultHead(v), schemas)
	if err != nil {
		return err
	}
	oadp, err := OADP(rel.OADP.Version, minor, schemas)
	if err != nil {
		return err
	}
	return WriteCatalog(dir, hco, oadp)
}

// WriteAheadCatalog writes into dir the redhat-operators index of
// OpenShift 4.22 as it is some weeks after virtc's version table was
// written: Red Hat has published the z-stream 4.22.7, which the table
// (4.22.0-4.22.6) does not know, on the stable channel, and the next
// minor's first bundle, 4.23.0, on a candidate channel. Their edges are
// those HCO's bundles carry (tools/csv-merger/csv-merger.go v1.18.1:
// --replaces-csv-version, and --olm-skip-range ">=4.22.0 <4.22.7"): 4.22.7
// replaces 4.22.6 and skips every earlier 4.22 z-stream by range; 4.23.0
// replaces 4.22.7 and skips the 4.22 z-streams by range. The table's
// model of the index (HCOChannel) would put the head at 4.22.6.
func WriteAheadCatalog(dir, schemas string) error {
	rel, v, err := versions.Lookup("4.22.0")
	if err != nil {
		return err
	}
	table, err := versions.HCOChannel(versions.DefaultHead(v))
	if err != nil {
		return err
	}
	v4227, v4230 := versions.Version{Major: 4, Minor: 22, Patch: 7}, versions.Version{Major: 4, Minor: 23}
	b4227 := versions.NewBundle(versions.HCOCSV(v4227), v4227, versions.HCOCSV(table.Head()), nil, ">=4.22.0 <4.22.7")
	stable, err := versions.NewChannel(versions.HCOChannelPackage, Channel, versions.HCOCSV, append([]versions.Bundle{b4227}, slices.Concat(table.Bundles, table.Others)...))
	if err != nil {
		return err
	}
	candidate, err := versions.NewChannel(versions.HCOChannelPackage, "candidate", versions.HCOCSV, []versions.Bundle{
		versions.NewBundle(versions.HCOCSV(v4230), v4230, b4227.Name, nil, ">=4.22.0 <4.23.0"),
		versions.NewBundle(b4227.Name, v4227, "", nil, ""),
	})
	if err != nil {
		return err
	}
	hco, err := HCO(table.Head(), schemas)
	if err != nil {
		return err
	}
	hco.Channel, hco.More = stable, map[string]*versions.Channel{"candidate": candidate}
	crd := hco.CRD
	hco.CRD = func(v versions.Version) ([]byte, error) {
		// No schemas of 4.23 here: its bundle owns the 4.22 CRD.
		return crd(versions.Version{Major: 4, Minor: min(v.Minor, 22)})
	}
	oadp, err := OADP(rel.OADP.Version, "4.22", schemas)
	if err != nil {
		return err
	}
	return WriteCatalog(dir, hco, oadp)
}

// Channel is the channel name virtc's Subscriptions name (stable).
const Channel = "stable"

// WriteCatalog writes the file-based catalog of pkgs into dir/index.json.
func WriteCatalog(dir string, pkgs ...Package) error {
	var out []byte
	add := func(v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		out = append(append(out, data...), '\n')
		return nil
	}
	for _, p := range pkgs {
		if err := add(map[string]any{"schema": "olm.package", "name": p.Name, "defaultChannel": Channel}); err != nil {
			return err
		}
		channels := map[string]*versions.Channel{Channel: p.Channel}
		for name, ch := range p.More {
			channels[name] = ch
		}
		for _, name := range slices.Sorted(maps.Keys(channels)) {
			ch := channels[name]
			var entries []any
			for _, b := range slices.Concat(ch.Bundles, ch.Others) {
				e := map[string]any{"name": b.Name}
				if b.Replaces != "" {
					e["replaces"] = b.Replaces
				}
				if len(b.Skips) > 0 {
					e["skips"] = b.Skips
				}
				if b.SkipRange != "" {
					e["skipRange"] = b.SkipRange
				}
				entries = append(entries, e)
			}
			if err := add(map[string]any{"schema": "olm.channel", "package": p.Name, "name": name, "entries": entries}); err != nil {
				return err
			}
		}
		for _, b := range p.all() {
			bundle, err := p.bundle(b)
			if err != nil {
				return err
			}
			if err := add(bundle); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.json"), out, 0o644)
}

// all are the package's bundles, each once: the stable channel's, then
// those only in other channels. The same bundle may sit in several
// channels with other edges (an olm.channel entry holds them); its
// olm.bundle, and the CSV in it, carry the stable channel's.
func (p Package) all() []versions.Bundle {
	out := slices.Concat(p.Channel.Bundles, p.Channel.Others)
	for _, name := range slices.Sorted(maps.Keys(p.More)) {
		ch := p.More[name]
		for _, b := range slices.Concat(ch.Bundles, ch.Others) {
			if !slices.ContainsFunc(out, func(o versions.Bundle) bool { return o.Name == b.Name }) {
				out = append(out, b)
			}
		}
	}
	return out
}

// bundle is the olm.bundle of version b.
func (p Package) bundle(b versions.Bundle) (map[string]any, error) {
	crdYAML, err := p.CRD(b.Version)
	if err != nil {
		return nil, err
	}
	var crd map[string]any
	if err := yaml.Unmarshal(crdYAML, &crd); err != nil {
		return nil, fmt.Errorf("%s CRD: %v", p.Name, err)
	}
	group, kind, crdName, served := crdFacts(crd)
	if crdName == "" || len(served) == 0 {
		return nil, fmt.Errorf("%s CRD of %s: no name or served version", p.Name, b.Version)
	}
	csvName := b.Name
	csv := p.csv(b, csvName, crdName, kind, served[0])
	var props []any
	props = append(props, map[string]any{"type": "olm.package", "value": map[string]any{"packageName": p.Name, "version": b.Version.String()}})
	for _, v := range served {
		props = append(props, map[string]any{"type": "olm.gvk", "value": map[string]any{"group": group, "kind": kind, "version": v}})
	}
	for _, obj := range []any{csv, crd} {
		data, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		props = append(props, map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": base64.StdEncoding.EncodeToString(data)}})
	}
	return map[string]any{"schema": "olm.bundle", "name": csvName, "package": p.Name, "properties": props}, nil
}

func crdFacts(crd map[string]any) (group, kind, name string, served []string) {
	meta, _ := crd["metadata"].(map[string]any)
	name, _ = meta["name"].(string)
	spec, _ := crd["spec"].(map[string]any)
	group, _ = spec["group"].(string)
	names, _ := spec["names"].(map[string]any)
	kind, _ = names["kind"].(string)
	vs, _ := spec["versions"].([]any)
	for _, v := range vs {
		vm, _ := v.(map[string]any)
		if s, _ := vm["served"].(bool); s {
			if n, _ := vm["name"].(string); n != "" {
				served = append(served, n)
			}
		}
	}
	return group, kind, name, served
}

// OperatorImage is the image of package pkg's operator at version v in the
// generated bundles: a digest derived from the two, so that each CSV's
// Deployment differs as a real release's does.
func OperatorImage(pkg string, v versions.Version) string {
	sum := sha256.Sum256([]byte(pkg + "@" + v.String()))
	return fmt.Sprintf("registry.redhat.io/virtc-e2e/%s-operator@sha256:%x", pkg, sum)
}

func (p Package) csv(b versions.Bundle, name, crdName, kind, version string) map[string]any {
	annotations := map[string]any{}
	if b.SkipRange != "" {
		annotations["olm.skipRange"] = b.SkipRange
	}
	sa := p.Deployment
	labels := map[string]any{"name": p.Deployment}
	container := map[string]any{"name": p.Deployment, "image": OperatorImage(p.Name, b.Version)}
	if p.Readiness != nil {
		container["readinessProbe"] = p.Readiness
	}
	spec := map[string]any{
		"displayName": p.Name,
		"version":     b.Version.String(),
		"installModes": []any{
			map[string]any{"type": "OwnNamespace", "supported": true},
			map[string]any{"type": "SingleNamespace", "supported": false},
			map[string]any{"type": "MultiNamespace", "supported": false},
			map[string]any{"type": "AllNamespaces", "supported": false},
		},
		"customresourcedefinitions": map[string]any{"owned": []any{
			map[string]any{"name": crdName, "version": version, "kind": kind, "displayName": kind},
		}},
		"install": map[string]any{"strategy": "deployment", "spec": map[string]any{
			"permissions": []any{map[string]any{"serviceAccountName": sa, "rules": []any{
				map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps", "events", "pods", "services"}, "verbs": []any{"*"}},
			}}},
			"deployments": []any{map[string]any{"name": p.Deployment, "spec": map[string]any{
				"replicas": 1,
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{
						"serviceAccountName": sa,
						"containers":         []any{container},
					},
				},
			}}},
		}},
	}
	if b.Replaces != "" {
		spec["replaces"] = b.Replaces
	}
	if len(b.Skips) > 0 {
		spec["skips"] = b.Skips
	}
	return map[string]any{
		"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": name, "annotations": annotations},
		"spec":     spec,
	}
}
