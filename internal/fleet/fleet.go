// Package fleet generates realistic, seeded fleets of intents for
// benchmarks: tenants with access and sometimes a quota, and VMs with a mix
// of sizes, images, data disks, networks and backup policies. The same
// options always produce the same bytes, on any machine and Go version (the
// generator has its own random number generator).
package fleet

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/versions"
)

// Options say what fleet to generate.
type Options struct {
	// Tenants is the number of tenants (at least 1).
	Tenants int
	// VMs is the number of VMs across all tenants (at least Tenants, so
	// that every tenant has a VM).
	VMs int
	// Seed picks one fleet among all fleets of this shape.
	Seed uint64
}

// File is one generated file.
type File struct {
	// Path is relative to the fleet's directory, with forward slashes.
	Path string
	Data []byte
}

// BridgeNetwork is the name of the bridge NetworkProfile the fleet's
// catalog file adds: the second network of VMs that have two.
const BridgeNetwork = "storage-net"

// CatalogFile is the fleet's catalog file.
const CatalogFile = "catalog/networks.yaml"

type sizeWeight struct {
	name   string
	weight int
}

// sizeWeights is how often each u1 size appears: mostly small and medium
// machines, a few large ones, as in a general-purpose fleet.
var sizeWeights = []sizeWeight{
	{"u1.nano", 2}, {"u1.micro", 4}, {"u1.small", 12}, {"u1.medium", 18}, {"u1.2xmedium", 12},
	{"u1.large", 14}, {"u1.xlarge", 8}, {"u1.2xlarge", 4}, {"u1.4xlarge", 2}, {"u1.8xlarge", 1},
}

var (
	teams     = []string{"payments", "web", "data", "search", "billing", "identity", "ml", "ops", "media", "mail", "erp", "crm", "ci", "analytics", "support", "edge"}
	roles     = []string{"web", "api", "db", "cache", "mq", "batch", "build", "app", "proxy", "worker"}
	diskNames = []string{"data", "logs", "wal", "scratch", "archive", "index"}
	diskGi    = []int64{10, 20, 50, 100, 200, 500}
	rootGi    = []int64{40, 60, 100}
	envs      = []string{"prod", "staging", "dev"}
	// policies of the default catalog the fleet uses; "none" takes no
	// backups.
	policies = []string{"daily", "weekly", "none"}
)

// facts are what the generator takes from the default catalog, so that
// quotas are computed from the same sizes virtc compiles with.
type facts struct {
	sizes     map[string]api.SizeSpec
	images    []string
	minRootGi map[string]int64
	// needs are the requirements of each image's preference (nil: none).
	needs map[string]*api.PreferenceRequirements
	// autoUpdated are the default catalog's images that clone one of
	// HyperConverged's auto-updated boot sources, each with its spec.
	autoUpdated []api.Image
}

func defaultCatalog() (facts, error) {
	diags := &diag.List{}
	set := catalog.Embedded(diags)
	if diags.HasErrors() {
		return facts{}, fmt.Errorf("default catalog: %s", diag.Format(diags.Errors()))
	}
	f := facts{sizes: map[string]api.SizeSpec{}, minRootGi: map[string]int64{}, needs: map[string]*api.PreferenceRequirements{}}
	for _, s := range set.Sizes {
		f.sizes[s.Obj.Metadata.Name] = s.Obj.Spec
	}
	prefs := map[string]*api.PreferenceRequirements{}
	for _, p := range set.Preferences {
		prefs[p.Obj.Metadata.Name] = p.Obj.Spec.Requirements
	}
	for _, img := range set.Images {
		name := img.Obj.Metadata.Name
		min := img.Obj.Spec.MinRootDisk
		if img.Obj.Spec.DefaultRootDisk != nil {
			min = *img.Obj.Spec.DefaultRootDisk
		}
		f.images = append(f.images, name)
		f.needs[name] = prefs[img.Obj.Spec.Preference]
		if ds := img.Obj.Spec.DataSource; ds != nil && ds.ManagedBy == api.ManagedByHyperConverged {
			f.autoUpdated = append(f.autoUpdated, *img.Obj)
		}
		f.minRootGi[name] = (min.Value() + gi - 1) / gi
	}
	slices.Sort(f.images)
	slices.SortFunc(f.autoUpdated, func(a, b api.Image) int { return cmp.Compare(a.Metadata.Name, b.Metadata.Name) })
	for _, w := range sizeWeights {
		if _, ok := f.sizes[w.name]; !ok {
			return facts{}, fmt.Errorf("default catalog has no size %s", w.name)
		}
	}
	for _, p := range policies {
		if !slices.ContainsFunc(set.BackupPolicies, func(e decode.Entry[api.BackupPolicy]) bool { return e.Obj.Metadata.Name == p }) {
			return facts{}, fmt.Errorf("default catalog has no backup policy %s", p)
		}
	}
	if len(f.images) == 0 {
		return facts{}, errors.New("default catalog has no images")
	}
	return f, nil
}

const gi = 1 << 30

// Generate returns the fleet's files in path order: the catalog file and
// one file per tenant (tenants/<name>.yaml) holding the Tenant and its VMs.
func Generate(opts Options) ([]File, error) {
	if opts.Tenants < 1 {
		return nil, errors.New("fleet: at least one tenant")
	}
	if opts.VMs < opts.Tenants {
		return nil, fmt.Errorf("fleet: %d VMs cannot fill %d tenants (every tenant has at least one VM)", opts.VMs, opts.Tenants)
	}
	f, err := defaultCatalog()
	if err != nil {
		return nil, err
	}
	r := newRand(opts.Seed)
	counts := split(r, opts.VMs, opts.Tenants)
	files := []File{{Path: CatalogFile, Data: catalogYAML(f)}}
	width := len(fmt.Sprint(opts.Tenants))
	for i, n := range counts {
		name := fmt.Sprintf("%s-%0*d", teams[i%len(teams)], width, i+1)
		files = append(files, File{Path: "tenants/" + name + ".yaml", Data: tenantFile(r, f, name, n)})
	}
	slices.SortFunc(files, func(a, b File) int { return cmp.Compare(a.Path, b.Path) })
	return files, nil
}

// split deals n VMs to t tenants: every tenant gets one, the rest go by
// random weights from 1 to 8, so some tenants are eight times larger than
// others, as in a real fleet.
func split(r *rng, n, t int) []int {
	weights := make([]int, t)
	total := 0
	for i := range weights {
		weights[i] = 1 + r.intn(8)
		total += weights[i]
	}
	counts := make([]int, t)
	rest := n - t
	given := 0
	for i, w := range weights {
		counts[i] = 1 + rest*w/total
		given += counts[i] - 1
	}
	// Hand the rounding remainder out round-robin from a random start.
	start := r.intn(t)
	for i := 0; given < rest; i++ {
		counts[(start+i)%t]++
		given++
	}
	return counts
}

func catalogYAML(f facts) []byte {
	return []byte(pinnedImagesYAML(f) + `# A bridge network on the nodes' br1 (VLAN 120) for storage and backup
# traffic: the second network of the VMs that have two.
apiVersion: virtc.dev/v1alpha1
kind: NetworkProfile
metadata:
  name: ` + BridgeNetwork + `
spec:
  type: bridge
  migratable: true
  bridge:
    name: br1
    vlan: 120
` + evidenceYAML())
}

// pinnedImagesYAML replaces each of the default catalog's auto-updated
// boot sources by a pinned copy the platform team keeps in namespace
// platform-images: the fleet's production VMs clone versioned images (doc
// 000), as a real platform's must (rules.imageProvenance).
func pinnedImagesYAML(f facts) string {
	var b bytes.Buffer
	for _, img := range f.autoUpdated {
		fmt.Fprintf(&b, "apiVersion: virtc.dev/v1alpha1\nkind: Image\nmetadata:\n  name: %s\nspec:\n  dataSource:\n    name: %s-pinned\n    namespace: platform-images\n", img.Metadata.Name, img.Metadata.Name)
		fmt.Fprintf(&b, "  provenance: %q\n", img.Spec.Provenance+"; a pinned copy kept in platform-images by the platform team")
		if img.Spec.Preference != "" {
			fmt.Fprintf(&b, "  preference: %s\n", img.Spec.Preference)
		}
		fmt.Fprintf(&b, "  minRootDisk: %s\n", img.Spec.MinRootDisk.String())
		if d := img.Spec.DefaultRootDisk; d != nil {
			fmt.Fprintf(&b, "  defaultRootDisk: %s\n", d.String())
		}
		if img.Spec.GuestAgent {
			b.WriteString("  guestAgent: true\n")
		}
		b.WriteString("---\n")
	}
	return b.String()
}

// evidenceYAML is what the fleet's builds need for the eligibility gate
// (design document 000, "Workload eligibility matrix"): the platform's
// published facts, since the fleet has no Platform, and accepted evidence
// for what its VMs use: the production tenants' restore drills and storage
// failover, the bridge network's failover test and security review (the
// additional-network class), and the migration tests of the two network
// layouts whose VMs require live migration. The facts list the baseline
// release's compatibility gate as accepted, as virtc facts publishes it from
// a platform repository whose gate Evidence is complete. A function, not a
// package variable: the baseline release is read when a fleet is written,
// not when virtc starts.
func evidenceYAML() string {
	return `---
apiVersion: virtc.dev/v1alpha1
kind: PlatformFacts
metadata:
  name: fleet
spec:
  version: 4.22.3
` + gateFacts("4.22.3") + fleetEvidence("ceph-rbd-failover", "storage-failover", "storageProfile: ceph-rbd") +
		fleetEvidence("daily-restore-drill", "restore-drill", "backupPolicy: daily") +
		fleetEvidence("weekly-restore-drill", "restore-drill", "backupPolicy: weekly") +
		fleetEvidence(BridgeNetwork+"-failover", "network-failover", "networkProfiles: ["+BridgeNetwork+"]") +
		fleetEvidence(BridgeNetwork+"-security-review", "security-review", "networkProfiles: ["+BridgeNetwork+"]") +
		fleetEvidence("migration-default", "migration-test", "storageProfile: ceph-rbd, networkProfiles: [default]") +
		fleetEvidence("migration-default-"+BridgeNetwork, "migration-test", "storageProfile: ceph-rbd, networkProfiles: [default, "+BridgeNetwork+"]")
}

func gateFacts(version string) string {
	base, _ := versions.BaselineRelease()
	out := "  compatibilityGate:\n"
	for _, g := range base.CompatibilityGate {
		out += "    - check: " + g.Check + "\n      evidence: " + g.Check + "-" + version + "\n"
	}
	return out
}

func fleetEvidence(name, check, covers string) string {
	return "---\napiVersion: virtc.dev/v1alpha1\nkind: Evidence\nmetadata:\n  name: " + name + "\nspec:\n  check: " + check +
		"\n  covers: {platformVersion: 4.22.3, " + covers + "}\n  date: \"2026-11-20\"\n  by: platform-team\n  link: https://tickets.example.com/fleet/" + name + "\n"
}

// vm is one generated VM with what the quota needs to know about it.
type vm struct {
	text     []byte
	vcpus    int64
	memory   int64 // bytes
	storageG int64 // GiB of disks
}

func tenantFile(r *rng, f facts, name string, count int) []byte {
	backup := policies[r.intn(len(policies))]
	production := backup != "none" && r.intn(4) == 0
	env := envs[r.intn(len(envs))]
	if production {
		env = "prod"
	}
	vms := make([]vm, count)
	width := max(3, len(fmt.Sprint(count)))
	for i := range vms {
		vms[i] = genVM(r, f, name, fmt.Sprintf("%s-%0*d", roles[r.intn(len(roles))], width, i+1), env, backup, production)
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "apiVersion: virtc.dev/v1alpha1\nkind: Tenant\nmetadata:\n  name: %s\n  labels:\n    env: %s\nspec:\n", name, env)
	fmt.Fprintf(&b, "  access:\n    admin: [%s-admins]\n    edit: [%s-devs]\n", name, name)
	if r.intn(2) == 0 {
		b.WriteString("    view: [auditors]\n")
	}
	if r.intn(2) == 0 {
		// A stated quota with room to grow: a quarter more than the VMs
		// need, rounded up.
		var cpu, mem, disk int64
		for _, v := range vms {
			cpu += v.vcpus
			mem += v.memory
			disk += v.storageG
		}
		fmt.Fprintf(&b, "  quota:\n    cpu: %d\n    memory: %dGi\n    storage: %dGi\n    vms: %d\n",
			grow(cpu), grow((mem+gi-1)/gi), grow(disk), grow(int64(count)))
	}
	// Every tenant may use the bridge network some of its VMs attach to
	// (an additional network reaches only the tenants that list it).
	fmt.Fprintf(&b, "  allow:\n    networks: [%s]\n", BridgeNetwork)
	fmt.Fprintf(&b, "  backup: %s\n", backup)
	if production {
		b.WriteString("  tier: production\n")
		fmt.Fprintf(&b, "  recovery:\n    restoresGuestData: %s-ops\n    validatesApplication: %s-app-owners\n", name, name)
	}
	for _, v := range vms {
		b.WriteString("---\n")
		b.Write(v.text)
	}
	return b.Bytes()
}

func grow(n int64) int64 { return n + (n+3)/4 }

func genVM(r *rng, f facts, tenant, name, env, tenantBackup string, production bool) vm {
	size := pickSize(r)
	image := f.images[r.intn(len(f.images))]
	size = fitSize(f, size, f.needs[image])
	spec := f.sizes[size]
	v := vm{vcpus: spec.CPU, memory: spec.Memory.Value(), storageG: f.minRootGi[image]}

	var b bytes.Buffer
	fmt.Fprintf(&b, "apiVersion: virtc.dev/v1alpha1\nkind: VM\nmetadata:\n  name: %s\n  namespace: %s\n", name, tenant)
	fmt.Fprintf(&b, "  labels:\n    app: %s\n    env: %s\nspec:\n  size: %s\n  image: %s\n", role(name), env, size, image)
	if r.intn(4) == 0 {
		root := max(rootGi[r.intn(len(rootGi))], f.minRootGi[image])
		v.storageG = root
		fmt.Fprintf(&b, "  rootDisk: %dGi\n", root)
	}
	if n := r.intn(4); n > 0 {
		b.WriteString("  disks:\n")
		names := slices.Clone(diskNames)
		for i := range n {
			j := i + r.intn(len(names)-i)
			names[i], names[j] = names[j], names[i]
			size := diskGi[r.intn(len(diskGi))]
			v.storageG += size
			fmt.Fprintf(&b, "    - name: %s\n      size: %dGi\n", names[i], size)
		}
	}
	if r.intn(3) == 0 {
		fmt.Fprintf(&b, "  networks: [default, %s]\n", BridgeNetwork)
	}
	switch r.intn(10) {
	case 0:
		b.WriteString("  runStrategy: Halted\n")
	case 1:
		b.WriteString("  runStrategy: RerunOnFailure\n")
	}
	switch r.intn(10) {
	case 0:
		b.WriteString("  migration: Required\n")
	case 1:
		b.WriteString("  migration: Never\n")
	}
	// A VM overrides its tenant's policy now and then; production VMs only
	// with a policy that takes backups.
	if r.intn(5) == 0 {
		p := policies[r.intn(len(policies))]
		if production && p == "none" {
			p = "daily"
		}
		if p != tenantBackup {
			fmt.Fprintf(&b, "  backup: %s\n", p)
		}
	}
	if r.intn(2) == 0 {
		fmt.Fprintf(&b, "  cloudInit:\n    userDataSecret: %s-cloudinit\n", name)
	}
	if r.intn(3) == 0 {
		fmt.Fprintf(&b, "  sshKeySecrets: [%s-ssh]\n", tenant)
	}
	v.text = b.Bytes()
	return v
}

func role(vmName string) string {
	for i := len(vmName) - 1; i >= 0; i-- {
		if vmName[i] == '-' {
			return vmName[:i]
		}
	}
	return vmName
}

// fitSize is size, or the next larger size of the mix that meets the
// image's preference requirements: KubeVirt refuses a VM whose instance
// type is below them (u1.nano or u1.micro with rhel.9, for example).
func fitSize(f facts, size string, need *api.PreferenceRequirements) string {
	i := slices.IndexFunc(sizeWeights, func(w sizeWeight) bool { return w.name == size })
	for ; i < len(sizeWeights); i++ {
		s := f.sizes[sizeWeights[i].name]
		if need == nil || s.CPU >= need.CPU && (need.Memory == nil || s.Memory.Cmp(*need.Memory) >= 0) {
			return sizeWeights[i].name
		}
	}
	return sizeWeights[len(sizeWeights)-1].name
}

func pickSize(r *rng) string {
	total := 0
	for _, w := range sizeWeights {
		total += w.weight
	}
	n := r.intn(total)
	for _, w := range sizeWeights {
		if n < w.weight {
			return w.name
		}
		n -= w.weight
	}
	panic("unreachable")
}

// Write generates the fleet into dir, which must not exist or be empty:
// a fleet mixed with other intents would not compile to what it says.
func Write(dir string, opts Options) ([]File, error) {
	files, err := Generate(opts)
	if err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty", dir)
	}
	for _, file := range files {
		p := filepath.Join(dir, filepath.FromSlash(file.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, file.Data, 0o644); err != nil {
			return nil, err
		}
	}
	return files, nil
}
