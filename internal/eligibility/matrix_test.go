package eligibility

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestMatrixWhole: matrix.yaml loads, names only implemented criteria,
// documents each, and keeps the order the label relies on (excluded rows
// before conditional ones, the standard row last).
func TestMatrixWhole(t *testing.T) {
	m := mustLoad(MatrixYAML())
	if len(m.Rows) == 0 || m.Rows[len(m.Rows)-1].Name != Standard {
		t.Fatalf("the last row must be %s", Standard)
	}
	rank := map[Status]int{Excluded: 0, Conditional: 1, Eligible: 2}
	for i := 1; i < len(m.Rows); i++ {
		if rank[m.Rows[i].Status] < rank[m.Rows[i-1].Status] {
			t.Errorf("row %s (%s) after row %s (%s): most restrictive first", m.Rows[i].Name, m.Rows[i].Status, m.Rows[i-1].Name, m.Rows[i-1].Status)
		}
	}
	for _, r := range m.Rows {
		if r.Status == Conditional && len(r.Evidence) == 0 {
			t.Errorf("conditional row %s asks no evidence", r.Name)
		}
		if r.Source == "" || !strings.HasPrefix(r.Source, "000 ") {
			t.Errorf("row %s does not name its design document section: %q", r.Name, r.Source)
		}
	}
}

// TestMatrixCheck: a matrix that names what virtc does not implement, or
// breaks the rows' rules, is refused.
func TestMatrixCheck(t *testing.T) {
	base := "criteria:\n" + criteriaYAML(t) + "rows:\n"
	standard := "  - {name: standard, status: eligible}\n"
	for name, tc := range map[string]struct{ rows, want string }{
		"unknown criterion":   {"  - {name: x, status: conditional, criteria: [bogus], evidence: [{check: c, about: class}]}\n" + standard, `unknown criterion "bogus"`},
		"unknown status":      {"  - {name: x, status: maybe, criteria: [worker-node]}\n" + standard, `unknown status "maybe"`},
		"no criteria":         {"  - {name: x, status: conditional}\n" + standard, "has no criteria"},
		"unknown about":       {"  - {name: x, status: conditional, criteria: [worker-node], evidence: [{check: c, about: vm}]}\n" + standard, `unknown about "vm"`},
		"no standard row":     {"  - {name: x, status: excluded, criteria: [worker-node]}\n", "0 eligible rows"},
		"standard w/criteria": {"  - {name: standard, status: eligible, criteria: [worker-node]}\n", "matched by VMs in no other row"},
	} {
		var m Matrix
		if err := yamlUnmarshal(base+tc.rows, &m); err != nil {
			t.Fatal(err)
		}
		err := m.check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
	var m Matrix
	if err := yamlUnmarshal("criteria: []\nrows: []\n", &m); err != nil {
		t.Fatal(err)
	}
	if err := m.check(); err == nil || !strings.Contains(err.Error(), "is not documented") {
		t.Errorf("undocumented criteria: error %v", err)
	}
}

func criteriaYAML(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, c := range mustLoad(MatrixYAML()).Criteria {
		b.WriteString("  - {id: " + c.ID + "}\n")
	}
	return b.String()
}

func yamlUnmarshal(s string, v any) error { return yaml.Unmarshal([]byte(s), v) }
