// Package eligibility places each VM in the platform's workload
// eligibility matrix (design document 000, "Workload eligibility matrix")
// and lists the evidence its rows and profiles require before onboarding.
// The matrix itself is data, matrix.yaml, which other compilers of the
// same policy read too.
package eligibility

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/virtc/virtc/internal/decode"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/resolve"
)

// Classify places a resolved VM in the matrix: every row it matches, most
// restrictive first, and the evidence they and its profiles require.
func Classify(vm *resolve.VM) Result {
	var r Result
	for _, c := range Classes() {
		var reasons []Reason
		for _, id := range c.Criteria {
			reasons = append(reasons, criteria[id](vm)...)
		}
		if len(reasons) > 0 {
			r.Rows = append(r.Rows, Match{Class: c, Reasons: reasons})
		}
	}
	if len(r.Rows) == 0 {
		r.Rows = []Match{{Class: class(Standard)}}
	}
	r.Class = r.Rows[0].Class
	for _, m := range r.Rows {
		for _, why := range m.Reasons {
			r.Reasons = append(r.Reasons, why.Text)
		}
	}
	r.Requirements = r.requirements(vm)
	for _, q := range r.Requirements {
		r.Evidence = append(r.Evidence, q.Description)
	}
	return r
}

// AssessmentCheck is the check that lifts an excluded hardware feature
// for the VMs that use it.
const AssessmentCheck = "architecture-assessment"

// RestoreDrillCheck is the check that proves a backup policy restores:
// every production VM that takes backups needs one, unexpired, for its
// policy.
const RestoreDrillCheck = "restore-drill"

// Features are the excluded hardware features a VM uses, as an
// assessment's covers.feature names them: each passed-through device by
// its resource name, then sriov, dedicatedCPU and hugepages.
func Features(vm *resolve.VM) []string {
	var out []string
	for _, d := range vm.Devices() {
		if !slices.Contains(out, d.ResourceName) {
			out = append(out, d.ResourceName)
		}
	}
	if slices.ContainsFunc(vm.Networks, func(n resolve.Network) bool { return n.NetworkProfile != nil && n.Spec.Type == api.NetworkSRIOV }) {
		out = append(out, "sriov")
	}
	if s := vm.Size; s != nil {
		if s.Spec.DedicatedCPU {
			out = append(out, "dedicatedCPU")
		}
		if s.Spec.Hugepages != "" {
			out = append(out, "hugepages")
		}
	}
	return out
}

// Standard is the name of the matrix's eligible row.
const Standard = "standard"

// Match is one row of the matrix a VM is in, and why.
type Match struct {
	Class   Class
	Reasons []Reason
}

// Reason is why a VM meets a criterion: for people, and the intent field
// that makes it so.
type Reason struct {
	Text  string
	Field string
	// Subject is the catalog entry the reason names (the network or
	// storage profile), for rows whose evidence is per profile.
	Subject string
}

// Result is a VM's place in the matrix.
type Result struct {
	// Class is the most restrictive row the VM is in: its
	// virtc.dev/eligibility label.
	Class Class
	// Rows are all the rows the VM is in, most restrictive first.
	Rows []Match
	// Reasons say why the VM is in its rows.
	Reasons []string
	// Evidence is required before onboarding: the rows', the profiles'
	// and the backup policy's, as descriptions.
	Evidence []string
	// Requirements are the same as checks that Evidence can satisfy.
	Requirements []Requirement
}

// Excluded reports whether the VM is in a row excluded from the baseline.
func (r Result) Excluded() bool {
	return slices.ContainsFunc(r.Rows, func(m Match) bool { return m.Class.Status == Excluded })
}

// Conditional lists the conditional rows the VM is in.
func (r Result) Conditional() []Match {
	var out []Match
	for _, m := range r.Rows {
		if m.Class.Status == Conditional {
			out = append(out, m)
		}
	}
	return out
}

// Names lists the names of the VM's rows.
func (r Result) Names() []string {
	var out []string
	for _, m := range r.Rows {
		out = append(out, m.Class.Name)
	}
	return out
}

// Requirement is one check a VM needs accepted evidence for: the check's
// identifier, what it must cover, and for how long evidence counts.
type Requirement struct {
	Check       string
	Description string
	// What the evidence must cover (empty: not part of the requirement).
	StorageProfile  string
	NetworkProfiles []string
	// Pool is the worker pool (compute profile) the check must have run on.
	Pool         string
	BackupPolicy string
	Class        string
	// Feature is the excluded feature an assessment covers.
	Feature string
	// PlatformWide: the check is about the whole platform on its exact
	// version (the compatibility gate), not one VM's profile.
	PlatformWide bool
	// Row is the conditional row of the matrix that asks for the check;
	// empty for a catalog entry's (a profile's, a backup policy's).
	Row string
	// ValidFor is how long after its date evidence counts; zero: always.
	ValidFor time.Duration
	// ValidForText is ValidFor as the catalog wrote it (90d), for messages.
	ValidForText string
}

// Subject says what the requirement's evidence must cover, for messages.
func (r Requirement) Subject() string {
	var parts []string
	if r.StorageProfile != "" {
		parts = append(parts, "storage profile "+r.StorageProfile)
	}
	if len(r.NetworkProfiles) > 0 {
		parts = append(parts, "network profiles "+strings.Join(r.NetworkProfiles, ", "))
	}
	if r.Pool != "" {
		parts = append(parts, "pool "+r.Pool)
	}
	if r.BackupPolicy != "" {
		parts = append(parts, "backup policy "+r.BackupPolicy)
	}
	if r.Class != "" {
		parts = append(parts, "class "+r.Class)
	}
	if r.Feature != "" {
		parts = append(parts, "feature "+r.Feature)
	}
	if r.PlatformWide {
		parts = append(parts, "the whole platform")
	}
	return strings.Join(parts, ", ")
}

// migrationStorage are the storage profiles of a VM's root and data disks,
// root first, each once.
func migrationStorage(vm *resolve.VM) []string {
	out := []string{vm.RootStorage.Name}
	for _, d := range vm.Disks {
		if d.Storage.StorageProfile != nil && !slices.Contains(out, d.Storage.Name) {
			out = append(out, d.Storage.Name)
		}
	}
	return out
}

func (r Result) requirements(vm *resolve.VM) []Requirement {
	var out []Requirement
	add := func(reqs ...Requirement) {
		for _, q := range reqs {
			// One check of the same thing is one requirement, whichever
			// entries ask for it (an additional-network row and its
			// profile both ask for its network failover test).
			if !slices.ContainsFunc(out, func(o Requirement) bool { return o.Check == q.Check && o.Subject() == q.Subject() }) {
				out = append(out, q)
			}
		}
	}
	for _, m := range r.Rows {
		for _, e := range m.Class.Evidence {
			switch e.About {
			case AboutClass:
				add(Requirement{Check: e.Check, Description: e.Description, Class: m.Class.Name, Row: m.Class.Name})
			case AboutMigrationProfile:
				// The VM's whole profile migrates: each storage profile of
				// its disks (one test per profile), its networks and, on a
				// worker pool, its compute (the pool's nodes and CPU
				// model). Doc 000: "on its exact storage/network/compute
				// profile".
				var nets []string
				for _, n := range vm.Networks {
					nets = append(nets, n.Name)
				}
				pool := ""
				if vm.Pool != nil {
					pool = vm.Pool.Name
				}
				for _, st := range migrationStorage(vm) {
					d := fmt.Sprintf(e.Description, st, strings.Join(nets, ", "))
					if pool != "" {
						d += " on pool " + pool
					}
					add(Requirement{Check: e.Check, Description: d, StorageProfile: st, NetworkProfiles: nets, Pool: pool, Row: m.Class.Name})
				}
			case AboutPlatform:
				add(Requirement{Check: e.Check, Description: e.Description, PlatformWide: true, Row: m.Class.Name})
			case AboutFeature:
				// One assessment per excluded feature the VM uses.
				for _, f := range Features(vm) {
					add(Requirement{Check: e.Check, Description: fmt.Sprintf(e.Description, f), Class: m.Class.Name, Feature: f, Row: m.Class.Name})
				}
			case AboutNetwork, AboutStorage:
				// One requirement per profile the row's criteria name.
				for _, why := range m.Reasons {
					q := Requirement{Check: e.Check, Description: fmt.Sprintf(e.Description, why.Subject), Row: m.Class.Name}
					if e.About == AboutNetwork {
						q.NetworkProfiles = []string{why.Subject}
					} else {
						q.StorageProfile = why.Subject
					}
					add(q)
				}
			}
		}
	}
	if slices.ContainsFunc(r.Rows, func(m Match) bool { return m.Class.Status == Excluded && len(m.Class.Evidence) == 0 }) {
		// No evidence lifts the row (confidential VMs, Technology
		// Preview features): the profiles' checks would never count.
		return out
	}
	storage := func(st resolve.Storage) {
		for _, e := range st.Spec.Evidence {
			add(Requirement{Check: e.Check, Description: e.Description, StorageProfile: st.Name})
		}
	}
	storage(vm.RootStorage)
	for _, d := range vm.Disks {
		if d.Storage.StorageProfile != nil {
			storage(d.Storage)
		}
	}
	if st := vm.StateStorage; st != nil && st.StorageProfile != nil {
		// The VM's persistent EFI and TPM state lives there.
		storage(*st)
	}
	for _, n := range vm.Networks {
		for _, e := range n.Spec.Evidence {
			add(Requirement{Check: e.Check, Description: e.Description, NetworkProfiles: []string{n.Name}})
		}
	}
	if p := vm.Backup.BackupPolicy; p != nil {
		var valid time.Duration
		if p.Spec.DrillInterval != "" {
			valid, _ = decode.ParseRetention(p.Spec.DrillInterval)
		}
		for _, e := range p.Spec.Evidence {
			add(Requirement{Check: e.Check, Description: e.Description, BackupPolicy: vm.Backup.Name, ValidFor: valid, ValidForText: p.Spec.DrillInterval})
		}
		if vm.Tier == resolve.TierProduction && vm.TakesBackups() && !slices.ContainsFunc(p.Spec.Evidence, func(e api.EvidenceRequirement) bool { return e.Check == RestoreDrillCheck }) {
			// A production VM's protection is proven by a restore drill
			// whether or not the policy's catalog entry lists one (doc 000,
			// Data Protection: "restore evidence is mandatory before
			// production onboarding"; issue 46).
			add(Requirement{Check: RestoreDrillCheck, Description: fmt.Sprintf("restore drill for backup policy %s (virtc restore-plan, in place and as a copy; the policy's catalog entry lists none, but production needs one)", vm.Backup.Name),
				BackupPolicy: vm.Backup.Name, ValidFor: valid, ValidForText: p.Spec.DrillInterval})
		}
	}
	return out
}
