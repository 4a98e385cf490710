// Package vap evaluates ValidatingAdmissionPolicies in the test process
// with the API server's own code: k8s.io/apiserver's CEL environment and
// its policy validator (pkg/admission/plugin/policy/validating,
// compilePolicy and validator.Validate, read at v0.34.3), so that `make
// test` holds virtc's policies to what a kube-apiserver decides, without
// starting one. The conformance suite (test/conformance) applies the same
// policies and writes to a real kube-apiserver.
package vap

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
)

// expression is a policy expression and the type it returns: the API
// server's accessors (validating.ValidationCondition, MessageExpression-
// Condition, matchconditions.MatchCondition) are this, in packages that
// bring the whole client-go along.
type expression struct {
	text    string
	returns *celgo.Type
}

func (e *expression) GetExpression() string      { return e.text }
func (e *expression) ReturnTypes() []*celgo.Type { return []*celgo.Type{e.returns} }
func (e *expression) GetName() string            { return e.text }

type variable struct {
	name string
	expression
}

func (v *variable) GetName() string { return v.name }

func (v *variable) ReturnTypes() []*celgo.Type { return []*celgo.Type{celgo.AnyType, celgo.DynType} }

// compositionEnv is the template every policy's compiler starts from, made
// once as the API server's plugin does (getCompositionEnvTemplateWith-
// StrictCost). Its base is the oldest Kubernetes virtc's platforms run,
// OpenShift 4.20's 1.33: a policy that uses a CEL library or function of a
// later release cannot be created there.
var compositionEnv = sync.OnceValues(func() (*plugincel.CompositionEnv, error) {
	return plugincel.NewCompositionEnv(plugincel.VariablesTypeName, environment.MustBaseEnvSet(version.MajorMinor(1, 33), true))
})

// Policy is a compiled ValidatingAdmissionPolicy.
type Policy struct {
	Spec                         admissionv1.ValidatingAdmissionPolicySpec
	match, validations, messages plugincel.ConditionEvaluator
}

// Compile compiles a policy as the API server's plugin does
// (pkg/admission/plugin/policy/validating/plugin.go compilePolicy, with
// StrictCostEnforcementForVAP on, its default), and returns every
// expression that does not compile: the API server would evaluate such an
// expression as a failure and, with failurePolicy Fail, refuse every write.
func Compile(p *admissionv1.ValidatingAdmissionPolicy) (*Policy, error) {
	env, err := compositionEnv()
	if err != nil {
		return nil, err
	}
	vars := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true, StrictCost: true}
	msgVars := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: false, StrictCost: true}
	fc := plugincel.NewCompositedCompilerFromTemplate(env)
	var problems []string
	for _, v := range p.Spec.Variables {
		if r := fc.CompileAndStoreVariable(&variable{name: v.Name, expression: expression{text: v.Expression}}, vars, environment.StoredExpressions); r.Error != nil {
			problems = append(problems, fmt.Sprintf("variable %s: %v", v.Name, r.Error))
		}
	}
	check := func(what string, a plugincel.ExpressionAccessor, opts plugincel.OptionalVariableDeclarations) {
		if r := fc.Compiler.CompileCELExpression(a, opts, environment.NewExpressions); r.Error != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", what, r.Error))
		}
	}
	var matchers []plugincel.ExpressionAccessor
	for _, m := range p.Spec.MatchConditions {
		e := &expression{text: m.Expression, returns: celgo.BoolType}
		check("matchCondition "+m.Name, e, vars)
		matchers = append(matchers, e)
	}
	var validations, messages []plugincel.ExpressionAccessor
	for i, v := range p.Spec.Validations {
		e := &expression{text: v.Expression, returns: celgo.BoolType}
		check(fmt.Sprintf("validation %d (%s)", i, ruleOf(v.Message)), e, vars)
		validations = append(validations, e)
		m := &expression{text: v.MessageExpression, returns: celgo.StringType}
		if v.MessageExpression == "" {
			m.text = "''"
		}
		check(fmt.Sprintf("messageExpression %d (%s)", i, ruleOf(v.Message)), m, msgVars)
		messages = append(messages, m)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("policy %s does not compile:\n  %s", p.Name, strings.Join(problems, "\n  "))
	}
	return &Policy{
		Spec:        p.Spec,
		match:       fc.CompileCondition(matchers, vars, environment.StoredExpressions),
		validations: fc.CompileCondition(validations, vars, environment.StoredExpressions),
		messages:    fc.CompileCondition(messages, msgVars, environment.StoredExpressions),
	}, nil
}

// ruleOf is the guardrail a virtc validation's static message names.
var ruleRE = regexp.MustCompile(`^virtc guardrail ([a-z0-9-]+):`)

func ruleOf(message string) string {
	if m := ruleRE.FindStringSubmatch(message); m != nil {
		return m[1]
	}
	return ""
}

// Request is one write to admit.
type Request struct {
	// Object and OldObject are the object as written and as it was (nil
	// for a create).
	Object, OldObject map[string]any
	// User and Groups are who writes.
	User   string
	Groups []string
	// Subresource, if the write is to one.
	Subresource string
}

// Denial is a refusal: the guardrail (from the message) and the message.
type Denial struct {
	Rule    string
	Message string
}

func (d Denial) String() string { return d.Message }

// Admit evaluates the policy on a write in a namespace with the given
// labels, as the API server does once the policy matches: the resource
// rules and namespace selector first, then the match conditions, then the
// validations. It returns the refusals (none: admitted) and the cost the
// evaluation ran up.
func (p *Policy) Admit(r Request, namespaceLabels map[string]string) ([]Denial, error) {
	var err error
	if r.Object, err = asServed(r.Object); err != nil {
		return nil, err
	}
	if r.OldObject, err = asServed(r.OldObject); err != nil {
		return nil, err
	}
	obj := &unstructured.Unstructured{Object: r.Object}
	gvk := obj.GroupVersionKind()
	gvr, ok := Resources[gvk.GroupKind()]
	if !ok {
		// Not a kind of the guardrails' resources: no policy of virtc's
		// matches it.
		return nil, nil
	}
	gvr.Version = gvk.Version
	op := admission.Create
	var old *unstructured.Unstructured
	if r.OldObject != nil {
		op = admission.Update
		old = &unstructured.Unstructured{Object: r.OldObject}
	}
	if !p.matches(gvr, op, namespaceLabels) {
		return nil, nil
	}
	ns := &corev1.Namespace{}
	ns.Name = obj.GetNamespace()
	ns.Labels = namespaceLabels
	info := &user.DefaultInfo{Name: r.User, Groups: append(slices.Clone(r.Groups), "system:authenticated")}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	attrs := admission.NewAttributesRecord(obj, nil, gvk, obj.GetNamespace(), obj.GetName(), gvr, r.Subresource, op, nil, false, info)
	if old != nil {
		attrs = admission.NewAttributesRecord(obj, old, gvk, obj.GetNamespace(), obj.GetName(), gvr, r.Subresource, op, nil, false, info)
	}
	va := &admission.VersionedAttributes{Attributes: attrs, VersionedObject: obj, VersionedKind: gvk}
	if oldObj != nil {
		va.VersionedOldObject = old
	}
	// What follows is validating.validator.Validate (v0.34.3), with a
	// failure of any expression (a match condition, a validation or a
	// message) returned as an error: virtc's policies must evaluate.
	ctx := context.Background()
	request := plugincel.CreateAdmissionRequest(attrs, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
	nsObj := plugincel.CreateNamespaceObject(ns)
	if len(p.Spec.MatchConditions) > 0 {
		results, _, err := p.match.ForInput(ctx, va, request, plugincel.OptionalVariableBindings{}, nsObj, celconfig.RuntimeCELCostBudgetMatchConditions)
		if err != nil {
			return nil, fmt.Errorf("match conditions: %w", err)
		}
		for _, res := range results {
			if res.Error != nil {
				return nil, fmt.Errorf("match condition: %w", res.Error)
			}
			if res.EvalResult != celtypes.True {
				return nil, nil
			}
		}
	}
	results, remaining, err := p.validations.ForInput(ctx, va, request, plugincel.OptionalVariableBindings{}, nsObj, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return nil, fmt.Errorf("evaluation failed (the API server would refuse with failurePolicy Fail): %w", err)
	}
	messages, _, err := p.messages.ForInput(ctx, va, request, plugincel.OptionalVariableBindings{}, nsObj, remaining)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	var out []Denial
	for i, res := range results {
		v := p.Spec.Validations[i]
		if res.Error != nil {
			return nil, fmt.Errorf("validation %s failed (the API server would refuse with failurePolicy Fail): %w", ruleOf(v.Message), res.Error)
		}
		if res.EvalResult == celtypes.True {
			continue
		}
		message := strings.TrimSpace(v.Message)
		if v.MessageExpression != "" {
			m := messages[i]
			if m.Error != nil {
				return nil, fmt.Errorf("messageExpression of %s failed: %w", ruleOf(v.Message), m.Error)
			}
			s, ok := m.EvalResult.Value().(string)
			s = strings.TrimSpace(s)
			switch {
			case !ok || s == "":
				return nil, fmt.Errorf("messageExpression of %s is empty", ruleOf(v.Message))
			case len(s) > celconfig.MaxEvaluatedMessageExpressionSizeBytes || strings.Contains(s, "\n"):
				return nil, fmt.Errorf("messageExpression of %s is too long or has a newline: the API server drops it", ruleOf(v.Message))
			}
			message = s
		}
		out = append(out, Denial{Rule: ruleOf(v.Message), Message: message})
	}
	return out, nil
}

// matches is the policy's matchConstraints: its resource rules for the
// operation and its namespace selector's labels.
func (p *Policy) matches(gvr schema.GroupVersionResource, op admission.Operation, labels map[string]string) bool {
	mc := p.Spec.MatchConstraints
	if mc == nil {
		return false
	}
	if sel := mc.NamespaceSelector; sel != nil {
		for k, v := range sel.MatchLabels {
			if labels[k] != v {
				return false
			}
		}
	}
	for _, rule := range mc.ResourceRules {
		opOK := slices.ContainsFunc(rule.Operations, func(o admissionv1.OperationType) bool {
			return o == admissionv1.OperationAll || string(o) == string(op)
		})
		if opOK && slices.Contains(rule.APIGroups, gvr.Group) && slices.Contains(rule.Resources, gvr.Resource) {
			return true
		}
	}
	return false
}

// asServed is an object as the API server's CEL sees it: a kind built
// into the API server is its Go type converted to unstructured
// (admission/plugin/cel condition.go objectToResolveVal), which writes a
// nil pointer without omitempty as null (a claim's
// spec.dataSource.apiGroup: null); a custom resource is as written.
func asServed(obj map[string]any) (map[string]any, error) {
	if obj == nil {
		return nil, nil
	}
	var typed any
	switch u := (&unstructured.Unstructured{Object: obj}); u.GroupVersionKind() {
	case corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"):
		typed = &corev1.PersistentVolumeClaim{}
	case corev1.SchemeGroupVersion.WithKind("ConfigMap"):
		typed = &corev1.ConfigMap{}
	case corev1.SchemeGroupVersion.WithKind("Secret"):
		typed = &corev1.Secret{}
	default:
		return obj, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj, typed, true); err != nil {
		return nil, err
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
}

// Resources are the resources of the kinds the guardrails judge (and
// those a test writes).
var Resources = map[schema.GroupKind]schema.GroupVersionResource{
	{Group: "kubevirt.io", Kind: "VirtualMachine"}:                          {Group: "kubevirt.io", Resource: "virtualmachines"},
	{Group: "kubevirt.io", Kind: "VirtualMachineInstance"}:                  {Group: "kubevirt.io", Resource: "virtualmachineinstances"},
	{Group: "kubevirt.io", Kind: "VirtualMachineInstanceReplicaSet"}:        {Group: "kubevirt.io", Resource: "virtualmachineinstancereplicasets"},
	{Group: "kubevirt.io", Kind: "VirtualMachineInstancePreset"}:            {Group: "kubevirt.io", Resource: "virtualmachineinstancepresets"},
	{Group: "pool.kubevirt.io", Kind: "VirtualMachinePool"}:                 {Group: "pool.kubevirt.io", Resource: "virtualmachinepools"},
	{Group: "snapshot.kubevirt.io", Kind: "VirtualMachineSnapshot"}:         {Group: "snapshot.kubevirt.io", Resource: "virtualmachinesnapshots"},
	{Group: "snapshot.kubevirt.io", Kind: "VirtualMachineSnapshotContent"}:  {Group: "snapshot.kubevirt.io", Resource: "virtualmachinesnapshotcontents"},
	{Group: "snapshot.kubevirt.io", Kind: "VirtualMachineRestore"}:          {Group: "snapshot.kubevirt.io", Resource: "virtualmachinerestores"},
	{Group: "clone.kubevirt.io", Kind: "VirtualMachineClone"}:               {Group: "clone.kubevirt.io", Resource: "virtualmachineclones"},
	{Group: "export.kubevirt.io", Kind: "VirtualMachineExport"}:             {Group: "export.kubevirt.io", Resource: "virtualmachineexports"},
	{Group: "cdi.kubevirt.io", Kind: "DataVolume"}:                          {Group: "cdi.kubevirt.io", Resource: "datavolumes"},
	{Group: "cdi.kubevirt.io", Kind: "DataImportCron"}:                      {Group: "cdi.kubevirt.io", Resource: "dataimportcrons"},
	{Group: "cdi.kubevirt.io", Kind: "VolumeImportSource"}:                  {Group: "cdi.kubevirt.io", Resource: "volumeimportsources"},
	{Group: "cdi.kubevirt.io", Kind: "VolumeUploadSource"}:                  {Group: "cdi.kubevirt.io", Resource: "volumeuploadsources"},
	{Group: "cdi.kubevirt.io", Kind: "VolumeCloneSource"}:                   {Group: "cdi.kubevirt.io", Resource: "volumeclonesources"},
	{Group: "", Kind: "PersistentVolumeClaim"}:                              {Group: "", Resource: "persistentvolumeclaims"},
	{Group: "", Kind: "ConfigMap"}:                                          {Group: "", Resource: "configmaps"},
	{Group: "", Kind: "Secret"}:                                             {Group: "", Resource: "secrets"},
	{Group: "k8s.cni.cncf.io", Kind: "NetworkAttachmentDefinition"}:         {Group: "k8s.cni.cncf.io", Resource: "network-attachment-definitions"},
	{Group: "k8s.ovn.org", Kind: "UserDefinedNetwork"}:                      {Group: "k8s.ovn.org", Resource: "userdefinednetworks"},
	{Group: "instancetype.kubevirt.io", Kind: "VirtualMachineInstancetype"}: {Group: "instancetype.kubevirt.io", Resource: "virtualmachineinstancetypes"},
	{Group: "instancetype.kubevirt.io", Kind: "VirtualMachinePreference"}:   {Group: "instancetype.kubevirt.io", Resource: "virtualmachinepreferences"},
}
