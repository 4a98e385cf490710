package eligibility

import (
	_ "embed"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/api"
)

// Status of a row in the matrix.
type Status string

const (
	Eligible    Status = "eligible"
	Conditional Status = "conditional"
	Excluded    Status = "excluded"
)

// What a row's evidence requirement must cover.
const (
	AboutClass            = "class"
	AboutStorage          = "storage"
	AboutNetwork          = "network"
	AboutMigrationProfile = "migrationProfile"
	AboutFeature          = "feature"
	// AboutPlatform: the whole platform on its exact version (one of the
	// compatibility gate's checks), asked by the row in every tier.
	AboutPlatform = "platform"
)

// Class is a row of the eligibility matrix.
type Class struct {
	// Name is the row's label value.
	Name   string `yaml:"name"`
	Status Status `yaml:"status"`
	// Title describes the row.
	Title string `yaml:"title"`
	// Source names the design document and section the row comes from.
	Source string `yaml:"source"`
	// Criteria are the ids of the criteria that place a VM in the row
	// (any one suffices).
	Criteria []string `yaml:"criteria"`
	// Evidence is what every VM of the row must show before onboarding.
	Evidence []RowEvidence `yaml:"evidence"`
}

// RowEvidence is a check a row asks for, and what its evidence covers.
type RowEvidence struct {
	api.EvidenceRequirement `yaml:",inline"`
	// About is class, storage, network, migrationProfile, feature or
	// platform.
	About string `yaml:"about"`
}

// Criterion documents a named test of the matrix.
type Criterion struct {
	ID    string `yaml:"id"`
	Field string `yaml:"field"`
	Means string `yaml:"means"`
}

// Matrix is matrix.yaml.
type Matrix struct {
	Criteria []Criterion `yaml:"criteria"`
	Rows     []Class     `yaml:"rows"`
}

//go:embed matrix.yaml
var matrixYAML []byte

// MatrixYAML is the matrix as data, for other compilers of the policy.
func MatrixYAML() []byte { return matrixYAML }

// Classes is the matrix, most restrictive first. It is decoded and checked
// on first use, not when the program starts: commands that never judge
// eligibility (a cached virtc cmp call, virtc version) do not pay for it.
var Classes = sync.OnceValue(func() []Class { return mustLoad(matrixYAML).Rows })

// mustLoad decodes the matrix and checks that it is whole: every criterion
// it names is implemented and documented, every row has a known status,
// and every requirement a known subject.
func mustLoad(data []byte) Matrix {
	var m Matrix
	if err := yaml.Unmarshal(data, &m); err != nil {
		panic("eligibility: matrix.yaml: " + err.Error())
	}
	if err := m.check(); err != nil {
		panic("eligibility: matrix.yaml: " + err.Error())
	}
	return m
}

func (m Matrix) check() error {
	documented := map[string]bool{}
	for _, c := range m.Criteria {
		if _, ok := criteria[c.ID]; !ok {
			return fmt.Errorf("criterion %q has no test in criteria.go", c.ID)
		}
		documented[c.ID] = true
	}
	for id := range criteria {
		if !documented[id] {
			return fmt.Errorf("criterion %q is not documented", id)
		}
	}
	standard := 0
	for _, r := range m.Rows {
		switch r.Status {
		case Eligible:
			standard++
			if len(r.Criteria) > 0 || r.Name != Standard {
				return fmt.Errorf("row %q: the eligible row is %q, matched by VMs in no other row", r.Name, Standard)
			}
		case Conditional, Excluded:
			if len(r.Criteria) == 0 {
				return fmt.Errorf("row %q has no criteria", r.Name)
			}
		default:
			return fmt.Errorf("row %q: unknown status %q", r.Name, r.Status)
		}
		for _, id := range r.Criteria {
			if !documented[id] {
				return fmt.Errorf("row %q: unknown criterion %q", r.Name, id)
			}
		}
		for _, e := range r.Evidence {
			switch e.About {
			case AboutClass, AboutStorage, AboutNetwork, AboutMigrationProfile, AboutFeature, AboutPlatform:
			default:
				return fmt.Errorf("row %q, check %q: unknown about %q", r.Name, e.Check, e.About)
			}
		}
	}
	if standard != 1 {
		return fmt.Errorf("%d eligible rows, want 1", standard)
	}
	return nil
}

func class(name string) Class {
	for _, c := range Classes() {
		if c.Name == name {
			return c
		}
	}
	panic("eligibility: no class " + name)
}
