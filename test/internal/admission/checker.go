// Package admission runs KubeVirt's and CDI's own admission code, offline,
// on manifest streams virtc emits: the objects a cluster would receive when
// Argo CD applies the stream, and the objects the controllers derive from
// them (the DataVolume of each dataVolumeTemplate, the VMI of each VM, the
// DataImportCron of each HyperConverged dataImportCronTemplate).
//
// Upstream code run (module versions pinned in go.mod):
//   - kubevirt.io/kubevirt v1.8.4:
//     pkg/virt-api/webhooks/mutating-webhook/mutators (VMsMutator, VMIsMutator),
//     pkg/virt-api/webhooks/validating-webhook/admitters (VMsAdmitter,
//     VMICreateAdmitter with pkg/network/admitter.Validate as virt-api wires it),
//     pkg/instancetype/webhooks and pkg/instancetype/preference/webhooks
//     (instancetype and preference admitters), pkg/instancetype/webhooks/vm
//     (instancetype/preference expansion of a VM),
//     pkg/virt-controller/watch/util.CreateDataVolumeManifest (the
//     DataVolume of a dataVolumeTemplate), MigrationPolicyAdmitter of
//     pkg/virt-api/webhooks/validating-webhook/admitters, and
//     pkg/storage/admitters (VMSnapshotAdmitter, VMRestoreAdmitter).
//   - kubevirt.io/containerized-data-importer v1.65.0:
//     pkg/apiserver/webhooks (DataVolume and DataImportCron validating
//     webhooks, through their HTTP handlers).
package admission

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"

	jsonpatch "github.com/evanphx/json-patch"
	admissionv1 "k8s.io/api/admission/v1"
	authv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	virtv1 "kubevirt.io/api/core/v1"
	instancetypev1beta1 "kubevirt.io/api/instancetype/v1beta1"
	snapshotv1 "kubevirt.io/api/snapshot/v1beta1"
	cdiv1 "kubevirt.io/containerized-data-importer-api/pkg/apis/core/v1beta1"
	cdiwebhooks "kubevirt.io/containerized-data-importer/pkg/apiserver/webhooks"
	preferencewebhooks "kubevirt.io/kubevirt/pkg/instancetype/preference/webhooks"
	instancetypewebhooks "kubevirt.io/kubevirt/pkg/instancetype/webhooks"
	instancetypevm "kubevirt.io/kubevirt/pkg/instancetype/webhooks/vm"
	netadmitter "kubevirt.io/kubevirt/pkg/network/admitter"
	storageadmitters "kubevirt.io/kubevirt/pkg/storage/admitters"
	"kubevirt.io/kubevirt/pkg/testutils"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks/mutating-webhook/mutators"
	"kubevirt.io/kubevirt/pkg/virt-api/webhooks/validating-webhook/admitters"
	virtconfig "kubevirt.io/kubevirt/pkg/virt-config"
	watchutil "kubevirt.io/kubevirt/pkg/virt-controller/watch/util"
)

// argoCDUser is the user the requests come from: Argo CD's application
// controller (not a KubeVirt service account, so no privileged paths).
const argoCDUser = "system:serviceaccount:openshift-gitops:openshift-gitops-argocd-application-controller"

// Finding is one denial or unresolved reference.
type Finding struct {
	Input      string // golden/<x>, examples/<x>, fleet seed=<n>, negative/<x>
	Kind       string
	Namespace  string
	Name       string
	Check      string // which upstream code denied, or "reference"
	Message    string
	Unresolved bool
	// About says what the object uses, for a VM its instancetype and
	// preference ("u1.micro/rhel.9").
	About string
}

func (f Finding) Object() string {
	if f.Namespace == "" {
		return f.Kind + " " + f.Name
	}
	return f.Kind + " " + f.Namespace + "/" + f.Name
}

func (f Finding) String() string {
	about := ""
	if f.About != "" {
		about = " [" + f.About + "]"
	}
	return fmt.Sprintf("%s: %s%s: %s: %s", f.Input, f.Object(), about, f.Check, f.Message)
}

// Report is the result of checking one stream.
type Report struct {
	Objects  int            // objects in the stream
	Reviews  int            // admission reviews run
	ByCheck  map[string]int // reviews per check
	Findings []Finding
}

// object is one document of the stream.
type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	raw []byte
}

func (o *object) group() string {
	if i := strings.Index(o.APIVersion, "/"); i >= 0 {
		return o.APIVersion[:i]
	}
	return ""
}

func (o *object) version() string {
	return o.APIVersion[strings.Index(o.APIVersion, "/")+1:]
}

// parseStream splits a YAML stream into objects (JSON each).
func parseStream(stream []byte) ([]*object, error) {
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(stream)))
	var out []*object
	for {
		doc, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		raw, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(raw) == "null" {
			continue
		}
		o := &object{raw: raw}
		if err := json.Unmarshal(raw, o); err != nil {
			return nil, err
		}
		if o.Kind == "List" {
			var list struct {
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, err
			}
			for _, it := range list.Items {
				item := &object{raw: it}
				if err := json.Unmarshal(it, item); err != nil {
					return nil, err
				}
				out = append(out, item)
			}
			continue
		}
		out = append(out, o)
	}
	return out, nil
}

// checker holds the fake cluster of one stream.
type checker struct {
	input  string
	report *Report
	cl     *cluster
	ctx    context.Context
	vmMut  *mutators.VMsMutator
	vmAdm  *admitters.VMsAdmitter
	vmiMut *mutators.VMIsMutator
	vmiAdm *admitters.VMICreateAdmitter
	itAdm  interface {
		ApplyToVM(*virtv1.VirtualMachine) (*instancetypev1beta1.VirtualMachineInstancetypeSpec, *instancetypev1beta1.VirtualMachinePreferenceSpec, []metav1.StatusCause)
	}
	dvPlain http.Handler // DataVolume webhook, no claim of the DV's name exists
	dvClaim http.Handler // DataVolume webhook, an unowned claim of the DV's name exists
	dicAdm  http.Handler
	snapAdm *storageadmitters.VMSnapshotAdmitter
	restAdm *storageadmitters.VMRestoreAdmitter
}

// Check runs every upstream check on one stream; input names it in the
// findings.
func Check(input string, stream []byte) (*Report, error) {
	return CheckWithContext(input, stream, nil)
}

// CheckWithContext is Check for a stream that is one part of a larger
// output (a `virtc build --scope` part): the objects of ctxStream are in
// the cluster already (they resolve references) but are not admitted.
func CheckWithContext(input string, stream, ctxStream []byte) (*Report, error) {
	objs, err := parseStream(stream)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", input, err)
	}
	ctxObjs, err := parseStream(ctxStream)
	if err != nil {
		return nil, fmt.Errorf("%s (context): %v", input, err)
	}
	c, err := newChecker(input, objs, ctxObjs)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		c.checkObject(o)
	}
	c.checkReferences(objs, append(append([]*object{}, objs...), ctxObjs...))
	sortFindings(c.report.Findings)
	return c.report, nil
}

// newChecker builds the fake cluster of a stream and the upstream webhooks
// bound to it.
func newChecker(input string, objs, ctxObjs []*object) (*checker, error) {
	cl, err := newCluster(objs, ctxObjs)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", input, err)
	}
	c := &checker{
		input:  input,
		report: &Report{Objects: len(objs), ByCheck: map[string]int{}},
		cl:     cl,
		ctx:    context.Background(),
	}
	c.vmMut = mutators.NewVMsMutator(cl.config, cl.virt)
	c.vmAdm = admitters.NewVMsAdmitter(cl.config, cl.virt, &webhooks.Informers{}, map[string]struct{}{})
	presets, _ := testutils.NewFakeInformerFor(&virtv1.VirtualMachineInstancePreset{})
	c.vmiMut = &mutators.VMIsMutator{ClusterConfig: cl.config, VMIPresetInformer: presets, KubeVirtServiceAccounts: map[string]struct{}{}}
	// as virt-api registers it (pkg/virt-api/api.go registerValidatingWebhooks)
	c.vmiAdm = &admitters.VMICreateAdmitter{
		ClusterConfig:           cl.config,
		KubeVirtServiceAccounts: map[string]struct{}{},
		SpecValidators: []admitters.SpecValidator{
			func(f *field.Path, spec *virtv1.VirtualMachineInstanceSpec, cfg *virtconfig.ClusterConfig) []metav1.StatusCause {
				return netadmitter.Validate(f, spec, cfg)
			},
		},
	}
	c.itAdm = instancetypevm.NewAdmitter(cl.virt)
	c.dvPlain = cdiwebhooks.NewDataVolumeValidatingWebhook(cl.k8s, cl.cdi, nil, cl.crc)
	c.dvClaim = cdiwebhooks.NewDataVolumeValidatingWebhook(cl.k8sWithClaims, cl.cdi, nil, cl.crc)
	c.dicAdm = cdiwebhooks.NewDataImportCronValidatingWebhook(cl.k8s, cl.cdi)
	// as virt-api serves them (pkg/virt-api/webhooks/validating-webhook
	// ServeVMSnapshots, ServeVMRestores); no restore is in progress
	c.snapAdm = storageadmitters.NewVMSnapshotAdmitter(cl.config, cl.virt)
	restores, _ := testutils.NewFakeInformerFor(&snapshotv1.VirtualMachineRestore{})
	c.restAdm = storageadmitters.NewVMRestoreAdmitter(cl.config, cl.virt, restores)
	return c, nil
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Input != b.Input {
			return a.Input < b.Input
		}
		if a.Object() != b.Object() {
			return a.Object() < b.Object()
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		return a.Message < b.Message
	})
}

func (c *checker) deny(o *object, check, msg string) {
	c.report.Findings = append(c.report.Findings, Finding{
		Input: c.input, Kind: o.Kind, Namespace: o.Metadata.Namespace, Name: o.Metadata.Name,
		Check: check, Message: msg, About: about(o),
	})
}

func (c *checker) unresolved(o *object, msg string) {
	c.report.Findings = append(c.report.Findings, Finding{
		Input: c.input, Kind: o.Kind, Namespace: o.Metadata.Namespace, Name: o.Metadata.Name,
		Check: "reference", Message: msg, Unresolved: true, About: about(o),
	})
}

// about names a VM's instancetype and preference.
func about(o *object) string {
	if o.Kind != "VirtualMachine" {
		return ""
	}
	var vm struct {
		Spec struct {
			Instancetype *struct{ Name string } `json:"instancetype"`
			Preference   *struct{ Name string } `json:"preference"`
		} `json:"spec"`
	}
	if json.Unmarshal(o.raw, &vm) != nil {
		return ""
	}
	it, p := "-", "-"
	if vm.Spec.Instancetype != nil {
		it = vm.Spec.Instancetype.Name
	}
	if vm.Spec.Preference != nil {
		p = vm.Spec.Preference.Name
	}
	if it == "-" && p == "-" {
		return ""
	}
	return "instancetype " + it + ", preference " + p
}

// review builds a CREATE AdmissionReview for raw.
func review(group, version, resource, namespace, name string, raw []byte) *admissionv1.AdmissionReview {
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       "virtc-admission",
			Operation: admissionv1.Create,
			Resource:  metav1.GroupVersionResource{Group: group, Version: version, Resource: resource},
			Namespace: namespace,
			Name:      name,
			Object:    runtime.RawExtension{Raw: raw},
			UserInfo:  authv1.UserInfo{Username: argoCDUser},
		},
	}
}

// message renders a denial: each cause as "field: message", or the status
// message when there are no causes.
func message(resp *admissionv1.AdmissionResponse) string {
	if resp.Result == nil {
		return "denied (no status)"
	}
	var parts []string
	if resp.Result.Details != nil {
		for _, cause := range resp.Result.Details.Causes {
			if cause.Field != "" {
				parts = append(parts, cause.Field+": "+cause.Message)
			} else {
				parts = append(parts, cause.Message)
			}
		}
	}
	if len(parts) == 0 {
		return resp.Result.Message
	}
	return strings.Join(parts, "; ")
}

// guard turns a panic of upstream code (a client call the fake cluster
// does not serve) into a finding instead of a crash.
func (c *checker) guard(o *object, check string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			c.deny(o, check, fmt.Sprintf("checker error: upstream code panicked: %v", r))
		}
	}()
	c.report.Reviews++
	c.report.ByCheck[check]++
	f()
}

// serveHTTP sends a review to a CDI webhook handler and returns its answer.
func serveHTTP(h http.Handler, ar *admissionv1.AdmissionReview) (*admissionv1.AdmissionResponse, error) {
	body, err := json.Marshal(ar)
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("webhook answered HTTP %d: %s", rec.Code, rec.Body.String())
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		return nil, err
	}
	if out.Response == nil {
		return nil, fmt.Errorf("webhook answered without a response")
	}
	return out.Response, nil
}

// serve sends a review to a CDI webhook handler (serveHTTP) and denies o
// under check when the webhook refuses, or when it cannot be asked.
func (c *checker) serve(o *object, check string, h http.Handler, ar *admissionv1.AdmissionReview) {
	resp, err := serveHTTP(h, ar)
	if err != nil {
		c.deny(o, check, "checker error: "+err.Error())
		return
	}
	if !resp.Allowed {
		c.deny(o, check, message(resp))
	}
}

func (c *checker) checkObject(o *object) {
	switch {
	case o.group() == "kubevirt.io" && o.Kind == "VirtualMachine":
		c.checkVM(o)
	case o.group() == "cdi.kubevirt.io" && o.Kind == "DataVolume":
		c.checkDataVolume(o, o.raw, "")
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachineClusterInstancetype":
		c.admit(o, "kubevirt instancetype admitter", "virtualmachineclusterinstancetypes", "", &instancetypewebhooks.ClusterInstancetypeAdmitter{})
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachineInstancetype":
		c.admit(o, "kubevirt instancetype admitter", "virtualmachineinstancetypes", o.Metadata.Namespace, &instancetypewebhooks.InstancetypeAdmitter{})
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachineClusterPreference":
		c.admit(o, "kubevirt preference admitter", "virtualmachineclusterpreferences", "", &preferencewebhooks.ClusterPreferenceAdmitter{})
	case o.group() == "instancetype.kubevirt.io" && o.Kind == "VirtualMachinePreference":
		c.admit(o, "kubevirt preference admitter", "virtualmachinepreferences", o.Metadata.Namespace, &preferencewebhooks.PreferenceAdmitter{})
	case o.group() == "hco.kubevirt.io" && o.Kind == "HyperConverged":
		c.checkDataImportCronTemplates(o)
	case o.group() == "migrations.kubevirt.io" && o.Kind == "MigrationPolicy":
		c.admit(o, "kubevirt migration policy admitter", "migrationpolicies", "", admitters.NewMigrationPolicyAdmitter())
	case o.group() == "snapshot.kubevirt.io" && o.Kind == "VirtualMachineSnapshot":
		c.admit(o, "kubevirt VM snapshot admitter", "virtualmachinesnapshots", o.Metadata.Namespace, c.snapAdm)
	case o.group() == "snapshot.kubevirt.io" && o.Kind == "VirtualMachineRestore":
		c.admit(o, "kubevirt VM restore admitter", "virtualmachinerestores", o.Metadata.Namespace, c.restAdm)
	}
}

// admitter is an upstream validating admitter.
type admitter interface {
	Admit(context.Context, *admissionv1.AdmissionReview) *admissionv1.AdmissionResponse
}

// admit runs a validating admitter on o as a CREATE of resource (of o's
// group) in namespace ("" for a cluster-scoped one) under check, and
// denies o with the admitter's message when it refuses.
func (c *checker) admit(o *object, check, resource, namespace string, a admitter) {
	c.guard(o, check, func() {
		ar := review(o.group(), o.version(), resource, namespace, o.Metadata.Name, o.raw)
		if resp := a.Admit(c.ctx, ar); !resp.Allowed {
			c.deny(o, check, message(resp))
		}
	})
}

// checkVM runs the VM mutating webhook, applies its patch, runs the VM
// validating admitter, then the DataVolume webhook on each
// dataVolumeTemplate's DataVolume and the VMI webhooks on the expanded
// template.
func (c *checker) checkVM(o *object) {
	const mutCheck = "kubevirt VM mutating webhook"
	const admCheck = "kubevirt VM validating admitter"
	mutated := c.mutate(o, o.raw, nil, mutCheck)
	if mutated == nil {
		return
	}
	admitted := false
	c.guard(o, admCheck, func() {
		ar := review("kubevirt.io", o.version(), "virtualmachines", o.Metadata.Namespace, o.Metadata.Name, mutated)
		resp := c.vmAdm.Admit(c.ctx, ar)
		if !resp.Allowed {
			c.deny(o, admCheck, message(resp))
			return
		}
		admitted = true
	})

	vm := &virtv1.VirtualMachine{}
	if err := json.Unmarshal(mutated, vm); err != nil {
		c.deny(o, mutCheck, "checker error: "+err.Error())
		return
	}
	// The DataVolume the VM controller creates for each template.
	for _, tmpl := range vm.Spec.DataVolumeTemplates {
		dvCheck := "kubevirt VM controller (DataVolume of dataVolumeTemplate " + tmpl.Name + ")"
		var dvRaw []byte
		c.guard(o, dvCheck, func() {
			dv, err := watchutil.CreateDataVolumeManifest(c.cl.virt, tmpl, vm)
			if apierrors.IsNotFound(err) {
				return // the missing DataSource is reported as unresolved
			}
			if err != nil {
				c.deny(o, dvCheck, err.Error())
				return
			}
			dv.TypeMeta = metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataVolume"}
			if dv.Namespace == "" {
				dv.Namespace = vm.Namespace
			}
			dvRaw, err = json.Marshal(dv)
			if err != nil {
				c.deny(o, dvCheck, "checker error: "+err.Error())
			}
		})
		if dvRaw != nil {
			c.checkDataVolume(o, dvRaw, tmpl.Name)
		}
	}
	// The VM controller creates no VMI while the instancetype or
	// preference is missing (reported as unresolved).
	if admitted && c.typesResolve(vm) {
		c.checkVMI(o, vm)
	}
}

// checkVMI builds the VMI of the VM's template with the instancetype and
// preference applied (the instancetype VM admitter's ApplyToVM, the same
// expansion the VM controller does), runs the VMI mutating webhook and
// applies its patch, then runs the VMI create admitter.
func (c *checker) checkVMI(o *object, vm *virtv1.VirtualMachine) {
	const check = "kubevirt VMI create admitter (expanded template)"
	c.guard(o, check, func() {
		raw, failed, err := c.templateVMI(vm, false)
		if err != nil {
			c.deny(o, failed, err.Error())
			return
		}
		ar := review("kubevirt.io", "v1", "virtualmachineinstances", vm.Namespace, vm.Name, raw)
		if resp := c.vmiAdm.Admit(c.ctx, ar); !resp.Allowed {
			c.deny(o, check, message(resp))
		}
	})
}

// templateVMI is the VMI of the VM's template with the instancetype and
// preference applied (the instancetype VM admitter's ApplyToVM, the same
// expansion the VM controller does) and the VMI mutating webhook's patch
// applied, as JSON; on error it names the check that refused. With
// started, the VMI is the one the VM controller creates when it starts the
// VM (launch.go).
func (c *checker) templateVMI(vm *virtv1.VirtualMachine, started bool) ([]byte, string, error) {
	const check = "kubevirt VMI create admitter (expanded template)"
	vmCopy := vm.DeepCopy()
	if _, _, causes := c.itAdm.ApplyToVM(vmCopy); len(causes) > 0 {
		return nil, check, fmt.Errorf("expanding instancetype/preference: %s: %s", causes[0].Field, causes[0].Message)
	}
	vmi := &virtv1.VirtualMachineInstance{
		TypeMeta:   metav1.TypeMeta{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance"},
		ObjectMeta: *vmCopy.Spec.Template.ObjectMeta.DeepCopy(),
		Spec:       vmCopy.Spec.Template.Spec,
	}
	vmi.Name = vm.Name
	vmi.Namespace = vm.Namespace
	if started {
		var err error
		if vmi, err = c.startedVMI(vmCopy); err != nil {
			return nil, check, err
		}
	}
	raw, err := json.Marshal(vmi)
	if err != nil {
		return nil, check, fmt.Errorf("checker error: %v", err)
	}
	ar := review("kubevirt.io", "v1", "virtualmachineinstances", vm.Namespace, vm.Name, raw)
	resp := c.vmiMut.Mutate(ar)
	if !resp.Allowed {
		return nil, "kubevirt VMI mutating webhook (expanded template)", errors.New(message(resp))
	}
	if len(resp.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(resp.Patch)
		if err == nil {
			raw, err = p.Apply(raw)
		}
		if err != nil {
			return nil, check, fmt.Errorf("checker error: VMI patch: %v", err)
		}
	}
	return raw, "", nil
}

// checkDataVolume runs CDI's DataVolume webhook twice: with no claim of the
// DataVolume's name in the namespace, and with an unowned one (a restored
// or pre-created claim; HCO enables CDI's DataVolumeClaimAdoption).
func (c *checker) checkDataVolume(o *object, raw []byte, template string) {
	var dv cdiv1.DataVolume
	if err := json.Unmarshal(raw, &dv); err != nil {
		c.deny(o, "cdi DataVolume webhook", "checker error: "+err.Error())
		return
	}
	what := "cdi DataVolume webhook"
	if template != "" {
		what += " (dataVolumeTemplate " + template + ")"
	}
	version := "v1beta1"
	if i := strings.Index(dv.APIVersion, "/"); i >= 0 {
		version = dv.APIVersion[i+1:]
	}
	for _, v := range []struct {
		h    http.Handler
		note string
	}{{c.dvPlain, ""}, {c.dvClaim, ", claim " + dv.Name + " exists"}} {
		check := what + v.note
		c.guard(o, check, func() {
			c.serve(o, check, v.h, review("cdi.kubevirt.io", version, "datavolumes", dv.Namespace, dv.Name, raw))
		})
	}
}

// checkDataImportCronTemplates runs CDI's DataImportCron webhook on the
// DataImportCron HCO creates for each spec.dataImportCronTemplates entry
// (in the golden-image namespace).
func (c *checker) checkDataImportCronTemplates(o *object) {
	var hc hyperConverged
	if err := json.Unmarshal(o.raw, &hc); err != nil {
		c.deny(o, "cdi DataImportCron webhook", "checker error: "+err.Error())
		return
	}
	for i, t := range hc.Spec.DataImportCronTemplates {
		var dic cdiv1.DataImportCron
		if err := json.Unmarshal(t, &dic); err != nil {
			c.deny(o, "cdi DataImportCron webhook", fmt.Sprintf("spec.dataImportCronTemplates[%d]: %v", i, err))
			continue
		}
		dic.TypeMeta = metav1.TypeMeta{APIVersion: "cdi.kubevirt.io/v1beta1", Kind: "DataImportCron"}
		dic.Namespace = hc.bootImageNamespace()
		check := fmt.Sprintf("cdi DataImportCron webhook (spec.dataImportCronTemplates[%d] %s)", i, dic.Name)
		c.guard(o, check, func() {
			raw, err := json.Marshal(&dic)
			if err != nil {
				c.deny(o, check, "checker error: "+err.Error())
				return
			}
			c.serve(o, check, c.dicAdm, review("cdi.kubevirt.io", "v1beta1", "dataimportcrons", dic.Namespace, dic.Name, raw))
		})
	}
}

// CheckUpdate admits the change from one output to the next as Argo CD
// applies it: an UPDATE review, with the old object as the cluster holds it,
// for each VirtualMachine and DataVolume both outputs hold (objects only in
// the new output are CREATEs, which Check covers). The cluster holds the new
// output's objects, and the old output's where the new one has none.
func CheckUpdate(input string, oldStream, newStream []byte) (*Report, error) {
	oldObjs, err := parseStream(oldStream)
	if err != nil {
		return nil, fmt.Errorf("%s (old): %v", input, err)
	}
	newObjs, err := parseStream(newStream)
	if err != nil {
		return nil, fmt.Errorf("%s (new): %v", input, err)
	}
	c, err := newChecker(input, newObjs, oldObjs)
	if err != nil {
		return nil, err
	}
	old := map[string]*object{}
	for _, o := range oldObjs {
		old[o.key()] = o
	}
	for _, o := range newObjs {
		prev := old[o.key()]
		if prev == nil {
			continue
		}
		switch {
		case o.group() == "kubevirt.io" && o.Kind == "VirtualMachine":
			c.checkVMUpdate(prev, o)
		case o.group() == "cdi.kubevirt.io" && o.Kind == "DataVolume":
			const check = "cdi DataVolume webhook (update)"
			c.guard(o, check, func() {
				ar := review("cdi.kubevirt.io", o.version(), "datavolumes", o.Metadata.Namespace, o.Metadata.Name, o.raw)
				ar.Request.Operation = admissionv1.Update
				ar.Request.OldObject = runtime.RawExtension{Raw: prev.raw}
				c.serve(o, check, c.dvPlain, ar)
			})
		}
	}
	sortFindings(c.report.Findings)
	return c.report, nil
}

// checkVMUpdate: the old VM as stored (its CREATE mutation applied), the
// new one sent as an UPDATE through the mutating webhook, its patch applied,
// then the validating admitter.
func (c *checker) checkVMUpdate(prev, o *object) {
	const mutCheck = "kubevirt VM mutating webhook (update)"
	const admCheck = "kubevirt VM validating admitter (update)"
	stored := c.mutate(prev, prev.raw, nil, mutCheck+": stored object")
	if stored == nil {
		return
	}
	sent := c.mutate(o, o.raw, stored, mutCheck)
	if sent == nil {
		return
	}
	c.guard(o, admCheck, func() {
		ar := review("kubevirt.io", o.version(), "virtualmachines", o.Metadata.Namespace, o.Metadata.Name, sent)
		ar.Request.Operation = admissionv1.Update
		ar.Request.OldObject = runtime.RawExtension{Raw: stored}
		if resp := c.vmAdm.Admit(c.ctx, ar); !resp.Allowed {
			c.deny(o, admCheck, message(resp))
		}
	})
}

// mutate runs the VM mutating webhook (an UPDATE when old is set) and
// returns raw with its patch applied, or nil after reporting a denial.
func (c *checker) mutate(o *object, raw, old []byte, check string) []byte {
	var out []byte
	c.guard(o, check, func() {
		ar := review("kubevirt.io", o.version(), "virtualmachines", o.Metadata.Namespace, o.Metadata.Name, raw)
		if old != nil {
			ar.Request.Operation = admissionv1.Update
			ar.Request.OldObject = runtime.RawExtension{Raw: old}
		}
		resp := c.vmMut.Mutate(ar)
		if !resp.Allowed {
			c.deny(o, check, message(resp))
			return
		}
		out = raw
		if len(resp.Patch) > 0 {
			p, err := jsonpatch.DecodePatch(resp.Patch)
			if err == nil {
				out, err = p.Apply(raw)
			}
			if err != nil {
				c.deny(o, check, "checker error: patch: "+err.Error())
				out = nil
			}
		}
	})
	return out
}

func (o *object) key() string {
	return o.group() + "/" + o.Kind + "/" + o.Metadata.Namespace + "/" + o.Metadata.Name
}
