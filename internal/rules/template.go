package rules

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/virtc/virtc/internal/emit"
)

// templateFieldsSpec is the allow list of a VirtualMachine's spec: every
// field virtc writes (internal/render virtualmachine.go, disk.go, placement.go,
// for its own VMs and the adopted VMs of virtc import), one per line,
// indented under its parent. A name ending in [] is a list of the entries
// below it; "*" below a field admits any key (labels, a node selector,
// resource requests); {} admits only an empty object; a field with nothing
// below it admits any value. The cluster's template-fields rule refuses a
// field outside it that a write adds or changes, the compile refuses
// writing one (checkTemplateFields).
//
// KubeVirt's own VM mutating webhook runs before the policy and its result
// is what the policy judges (kubevirt v1.8.4
// pkg/virt-api/webhooks/mutating-webhook/mutators/vm-mutator.go): it
// replaces /spec with the Go type written out, so domain.resources is
// always there, at least as {}; on create it adds the template annotation
// kubevirt.io/pci-topology-version (setDefaultPciTopologyVersion, when the
// machine type supports PCIe hotplug), and fills firmware, architecture and
// machine type. The list admits all of it.
const templateFieldsSpec = `
runStrategy
instancetype
  kind
  name
  revisionName
preference
  kind
  name
  revisionName
dataVolumeTemplates[]
  metadata
    creationTimestamp
    name
    labels
      *
    annotations
      *
  spec
    sourceRef
      kind
      name
      namespace
    source
      blank {}
      registry
        url
      pvc
        name
        namespace
      snapshot
        name
        namespace
    storage
      accessModes
      resources
        requests
          *
      storageClassName
      volumeMode
    pvc
      accessModes
      resources
        requests
          *
      storageClassName
      volumeMode
template
  metadata
    creationTimestamp
    labels
      *
    annotations
      kubevirt.io/pci-topology-version
  spec
    architecture
    evictionStrategy
    terminationGracePeriodSeconds
    subdomain
    nodeSelector
    tolerations[]
    affinity
    readinessProbe
    livenessProbe
    accessCredentials[]
    networks[]
      name
      pod {}
      multus
        networkName
    volumes[]
      name
      dataVolume
        name
        hotpluggable
      persistentVolumeClaim
        claimName
        hotpluggable
      cloudInitNoCloud
        userData
        userDataBase64
        secretRef
          name
        networkDataSecretRef
          name
      containerDisk
        image
    domain
      resources {}
      machine
        type
      firmware
        uuid
        serial
        bootloader
      cpu
        model
        sockets
        cores
        threads
      memory
        guest
      clock
      features
      devices
        disks[]
          name
          bootOrder
          serial
          disk
            bus
          cdrom
            bus
        interfaces[]
          name
          model
          macAddress
          pciAddress
          acpiIndex
          state
          masquerade {}
          bridge {}
          sriov {}
          binding
            name
        gpus[]
          name
          deviceName
        hostDevices[]
          name
          deviceName
        inputs[]
          type
          bus
          name
        rng {}
        tpm
          enabled
          persistent
`

// field is a node of the allow list.
type field struct {
	name string
	// list: the field is a list of entries (children apply to each).
	list bool
	// any: any key below (children unused); empty: only {}; leaf (no
	// children, not any or empty): any value.
	any, empty bool
	children   []*field
}

func (f *field) leaf() bool { return !f.any && !f.empty && len(f.children) == 0 }

func (f *field) child(name string) *field {
	for _, c := range f.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (f *field) names() []string {
	var out []string
	for _, c := range f.children {
		out = append(out, c.name)
	}
	return out
}

// templateFields is templateFieldsSpec parsed: the VM's spec.
var templateFields = sync.OnceValue(func() *field {
	root := &field{name: "spec"}
	stack := []*field{root}
	depth := []int{-1}
	for _, line := range strings.Split(templateFieldsSpec, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		for indent <= depth[len(depth)-1] {
			stack, depth = stack[:len(stack)-1], depth[:len(depth)-1]
		}
		parent := stack[len(stack)-1]
		text := strings.TrimSpace(line)
		if text == "*" {
			parent.any = true
			continue
		}
		f := &field{}
		if n, ok := strings.CutSuffix(text, " {}"); ok {
			f.empty, text = true, n
		}
		if n, ok := strings.CutSuffix(text, "[]"); ok {
			f.list, text = true, n
		}
		f.name = text
		parent.children = append(parent.children, f)
		stack, depth = append(stack, f), append(depth, indent)
	}
	return root
})

// celGen writes the CEL of the allow list, naming its comprehension
// variables apart.
type celGen struct{ n int }

func (g *celGen) v() string { g.n++; return fmt.Sprintf("f%d", g.n) }

// check is true when the map cur (at the allow list's f) holds only what f
// admits; old is the map the object had there ("" when the entry is new or
// changed: all of it is judged). A key that is not admitted is kept when
// old has it with the same value.
func (g *celGen) check(f *field, cur, old string) string {
	switch {
	case f.any || f.leaf():
		return "true"
	case f.empty:
		if old == "" {
			return "size(" + cur + ") == 0"
		}
		return "(size(" + cur + ") == 0 || " + cur + " == " + old + ")"
	}
	k := g.v()
	keyOK := k + " in " + celList(f.names())
	if old != "" {
		keyOK += " || " + k + " in " + old + " && " + old + "[" + k + "] == " + cur + "[" + k + "]"
	}
	terms := []string{cur + ".all(" + k + ", " + keyOK + ")"}
	for _, c := range f.children {
		if c.leaf() || c.any {
			continue
		}
		sub, oldSub := childPaths(c, cur, old)
		var t string
		if c.list {
			e := g.v()
			t = sub + ".all(" + e + ", " + g.check(&field{children: c.children, any: c.any, empty: c.empty}, e, "")
			if oldSub != "" {
				t += " || " + oldSub + ".exists(o, o == " + e + ")"
			}
			t += ")"
		} else {
			t = g.check(c, sub, oldSub)
		}
		if t == "true" {
			continue
		}
		terms = append(terms, "(!has("+sub+") || "+t+")")
	}
	return "(" + strings.Join(terms, " && ") + ")"
}

// childPaths are the CEL paths of child c under cur, and under old (when
// the update's old object is judged too: "" when it is not).
func childPaths(c *field, cur, old string) (sub, oldSub string) {
	sub = cur + "." + c.name
	if old != "" {
		oldSub = old + ".?" + c.name + ".orValue(" + zero(c) + ")"
	}
	return sub, oldSub
}

func zero(f *field) string {
	if f.list {
		return "[]"
	}
	return "{}"
}

// offenders is a CEL list of the paths of cur (at f, under path) that are
// not admitted, for the message: the keys of maps, and a list whose entry
// is not.
func (g *celGen) offenders(f *field, cur, old, path string) []string {
	if f.any || f.leaf() || f.empty {
		return nil
	}
	k := g.v()
	keyBad := "!(" + k + " in " + celList(f.names()) + ")"
	if old != "" {
		keyBad += " && !(" + k + " in " + old + " && " + old + "[" + k + "] == " + cur + "[" + k + "])"
	}
	out := []string{cur + ".filter(" + k + ", " + keyBad + ").map(" + k + ", " + celString(path+".") + " + " + k + ")"}
	for _, c := range f.children {
		if c.leaf() || c.any {
			continue
		}
		sub, oldSub := childPaths(c, cur, old)
		if c.list {
			// An entry a write adds or changes with a field outside the
			// list: the entry's own keys that are not admitted, or the
			// entry, when what is not admitted lies deeper.
			e, k2 := g.v(), g.v()
			elem := &field{children: c.children}
			bad := "!" + g.check(elem, e, "")
			if oldSub != "" {
				bad += " && !" + oldSub + ".exists(o, o == " + e + ")"
			}
			keys := e + ".filter(" + k2 + ", !(" + k2 + " in " + celList(elem.names()) + ")).map(" + k2 + ", " + celString(path+"."+c.name+"[].") + " + " + k2 + ").join(', ')"
			out = append(out, "(has("+sub+") ? "+sub+".filter("+e+", "+bad+").map("+e+", "+keys+" == '' ? "+celString(path+"."+c.name+"[]")+" : "+keys+") : [])")
			continue
		}
		if c.empty {
			check := g.check(c, sub, oldSub)
			out = append(out, "(has("+sub+") && !"+check+" ? ["+celString(path+"."+c.name)+"] : [])")
			continue
		}
		for _, o := range g.offenders(c, sub, oldSub, path+"."+c.name) {
			out = append(out, "(has("+sub+") ? "+o+" : [])")
		}
	}
	return out
}

// templateOffenderVariables are the policy's variable templateOffenders,
// the CEL list of the paths a write of a VM adds or changes outside the
// allow list (empty: the VM keeps to it), which the rule's expression and
// message both read, so that it is written and evaluated once; and before
// it, the parts it joins.
//
// The parts are variables of their own because the API server compiles a
// policy on every write of it and when it loads it, and cel-go's checker
// copies its type substitutions at each overload it resolves: its time
// grows with the square of an expression's size. As one 16 KB expression
// the list was 85% of the policy's compile time (kube-apiserver v1.37.2,
// k8s.io/apiserver pkg/admission/plugin/cel CompileAndStoreVariable;
// cel-go checker/checker.go resolveOverload, checker/mapping.go copy).
func templateOffenderVariables() []admissionv1.Variable {
	g := &celGen{}
	terms := g.offenders(templateFields(), "object.spec", "variables.oldSpec", "spec")
	var vars []admissionv1.Variable
	var refs []string
	part := func(ts []string) {
		name := fmt.Sprintf("templateOffenders%d", len(vars)+1)
		vars = append(vars, admissionv1.Variable{Name: name, Expression: "variables.vm && has(object.spec) ? " + strings.Join(ts, " + ") + " : []"})
		refs = append(refs, "variables."+name)
	}
	var cur []string
	size := 0
	for _, t := range terms {
		if size > 0 && size+len(t) > templatePartSize {
			part(cur)
			cur, size = nil, 0
		}
		cur, size = append(cur, t), size+len(t)
	}
	part(cur)
	return append(vars, admissionv1.Variable{Name: "templateOffenders", Expression: strings.Join(refs, " + ")})
}

// templatePartSize bounds the CEL of one part of templateOffenders (a part
// holds at least one term, whatever its size).
const templatePartSize = 1500

// Outside lists the paths of a value (a VirtualMachine's spec, as its Go
// type) that the allow list does not admit, as encoding/json would write
// them: the compile's own check of what it writes.
func Outside(spec any) []string {
	var out []string
	walk(reflect.ValueOf(spec), templateFields(), "spec", &out)
	return out
}

// walk appends the paths below v (at the allow list's f) that f does not
// admit.
func walk(v reflect.Value, f *field, path string, out *[]string) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if f.any || f.leaf() {
		return
	}
	if f.empty {
		if v.Kind() == reflect.Struct && !v.IsZero() || v.Kind() == reflect.Map && v.Len() > 0 {
			*out = append(*out, path)
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, sf := range structFields(v.Type()) {
			fv := v.Field(sf.index)
			if sf.inline {
				walk(fv, f, path, out)
				continue
			}
			// emit writes no empty struct (internal/emit encode.go), and what
			// says it is zero (metav1.Time) as null, which the API server
			// drops.
			if sf.omitempty && emit.IsEmptyValue(fv) || fv.Kind() == reflect.Struct && fv.IsZero() || sf.zeroer && zeroer(fv) {
				continue
			}
			c := f.child(sf.name)
			if c == nil {
				*out = append(*out, path+"."+sf.name)
				continue
			}
			if c.list {
				for j := range fv.Len() {
					walk(fv.Index(j), &field{children: c.children, any: c.any, empty: c.empty}, path+"."+sf.name+"[]", out)
				}
				continue
			}
			walk(fv, c, path+"."+sf.name, out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			name := fmt.Sprint(k.Interface())
			c := f.child(name)
			if c == nil {
				*out = append(*out, path+"."+name)
				continue
			}
			e := v.MapIndex(k)
			for e.Kind() == reflect.Interface && !e.IsNil() {
				e = e.Elem()
			}
			if c.list && e.Kind() == reflect.Slice {
				for j := range e.Len() {
					walk(e.Index(j), &field{children: c.children, any: c.any, empty: c.empty}, path+"."+name+"[]", out)
				}
				continue
			}
			walk(e, c, path+"."+name, out)
		}
	}
}

// structField is how encoding/json writes a struct's field.
type structField struct {
	index             int
	name              string
	omitempty, inline bool
	// zeroer: its type says when it is zero.
	zeroer bool
}

// structFieldsOf caches structFields: the walk reads every VM's types.
var structFieldsOf sync.Map

// structFields are the exported fields of a struct type as encoding/json
// writes them.
func structFields(t reflect.Type) []structField {
	if fs, ok := structFieldsOf.Load(t); ok {
		return fs.([]structField)
	}
	zeroerType := reflect.TypeFor[interface{ IsZero() bool }]()
	var out []structField
	for i := range t.NumField() {
		sf := t.Field(i)
		name, omitempty, inline := jsonName(sf)
		if name == "-" || !sf.IsExported() {
			continue
		}
		out = append(out, structField{index: i, name: name, omitempty: omitempty, inline: inline, zeroer: sf.Type.Implements(zeroerType)})
	}
	structFieldsOf.Store(t, out)
	return out
}

// jsonName is a struct field's JSON key, whether it is omitted when empty,
// and whether it is inlined.
func jsonName(sf reflect.StructField) (name string, omitempty, inline bool) {
	tag := sf.Tag.Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	omitempty = slices.Contains(strings.Split(opts, ","), "omitempty")
	inline = slices.Contains(strings.Split(opts, ","), "inline") || name == "" && sf.Anonymous
	if name == "" {
		name = sf.Name
	}
	return name, omitempty, inline
}

// zeroer reports a value whose type says it is zero (metav1.Time, which
// writes null and the API server drops): encoding/json's omitzero.
func zeroer(v reflect.Value) bool {
	z, ok := v.Interface().(interface{ IsZero() bool })
	return ok && (v.Kind() != reflect.Pointer || !v.IsNil()) && z.IsZero()
}
