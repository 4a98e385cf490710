package extapi_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	. "github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/test/conform"
)

// Every field the local types declare must exist, under the same JSON name,
// in the upstream schema of its kind, for every supported platform version.
func TestTypesMatchUpstreamSchemas(t *testing.T) {
	cases := []struct {
		schema string
		typ    reflect.Type
	}{
		{"crds/hco.kubevirt.io/hyperconverged_v1beta1.json", reflect.TypeFor[HyperConverged]()},
		{"crds/operators.coreos.com/operatorgroup_v1.json", reflect.TypeFor[OperatorGroup]()},
		{"crds/operators.coreos.com/subscription_v1alpha1.json", reflect.TypeFor[Subscription]()},
		{"crds/k8s.cni.cncf.io/networkattachmentdefinition_v1.json", reflect.TypeFor[NetworkAttachmentDefinition]()},
		{"crds/k8s.ovn.org/userdefinednetwork_v1.json", reflect.TypeFor[UserDefinedNetwork]()},
		{"crds/k8s.ovn.org/clusteruserdefinednetwork_v1.json", reflect.TypeFor[ClusterUserDefinedNetwork]()},
		{"crds/oadp.openshift.io/dataprotectionapplication_v1alpha1.json", reflect.TypeFor[DataProtectionApplication]()},
		{"crds/velero.io/schedule_v1.json", reflect.TypeFor[Schedule]()},
		{"crds/velero.io/backup_v1.json", reflect.TypeFor[Backup]()},
		{"crds/velero.io/restore_v1.json", reflect.TypeFor[Restore]()},
		{"crds/snapshot.kubevirt.io/virtualmachinesnapshot_v1beta1.json", reflect.TypeFor[VirtualMachineSnapshot]()},
		{"crds/snapshot.kubevirt.io/virtualmachinerestore_v1beta1.json", reflect.TypeFor[VirtualMachineRestore]()},
	}
	for _, version := range []string{"4.20", "4.22"} {
		dir, err := conform.Schemas(version)
		if err != nil {
			conform.Skip(t, err)
		}
		for _, c := range cases {
			data, err := os.ReadFile(filepath.Join(dir, c.schema))
			if err != nil {
				t.Fatal(err)
			}
			var schema map[string]any
			if err := json.Unmarshal(data, &schema); err != nil {
				t.Fatal(err)
			}
			checkFields(t, version, version+" "+c.typ.Name(), c.typ, schema, "")
		}
	}
}

// CatalogSource's schema is not in the shared folder: it is kept in the
// repository (test/schemas/README.md), from operator-lifecycle-manager
// v0.42.0's CRD.
func TestCatalogSourceMatchesOLMSchema(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "test", "schemas", "4.22", "crds", "operators.coreos.com", "catalogsource_v1alpha1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	checkFields(t, "4.22", "4.22 CatalogSource", reflect.TypeFor[CatalogSource](), schema, "")
}

// checkFields walks the struct fields declared in this package; types of
// other packages (Kubernetes, CDI) are upstream's own and not walked.
// A field tagged since:"4.21" is checked only against that version and later.
func checkFields(t *testing.T, version, what string, typ reflect.Type, schema map[string]any, path string) {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
		if items, ok := schema["items"].(map[string]any); ok {
			schema = items
		}
	}
	if typ.Kind() != reflect.Struct || typ.PkgPath() != reflect.TypeFor[HyperConverged]().PkgPath() {
		return
	}
	props, _ := schema["properties"].(map[string]any)
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "metadata" {
			continue // inline TypeMeta, and metadata, which the CRD schemas leave open
		}
		if since := f.Tag.Get("since"); since != "" && version < since {
			continue
		}
		sub, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s: field %s%s is not in the upstream schema", what, path, name)
			continue
		}
		checkFields(t, version, what, f.Type, sub, path+name+".")
	}
}

// PrometheusRule's and AlertmanagerConfig's schemas are prometheus-
// operator v0.85.0's, vendored by cmd/promcrdgen.
func TestMonitoringTypesMatchPrometheusOperatorSchemas(t *testing.T) {
	for _, c := range []struct {
		file string
		typ  reflect.Type
	}{
		{"prometheusrule_v1.json", reflect.TypeFor[PrometheusRule]()},
		{"alertmanagerconfig_v1alpha1.json", reflect.TypeFor[AlertmanagerConfig]()},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "test", "schemas", "prometheus-operator", "crds", "monitoring.coreos.com", c.file))
		if err != nil {
			t.Fatal(err)
		}
		var schema map[string]any
		if err := json.Unmarshal(data, &schema); err != nil {
			t.Fatal(err)
		}
		checkFields(t, "", c.typ.Name(), c.typ, schema, "")
	}
}
