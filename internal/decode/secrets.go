package decode

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/secret"
)

// secrets refuses secret material in any string of a virtc document: a
// label, an annotation, an image reference, a receiver's URL and every
// other string an input gives the output reach cluster objects (and their
// last-applied state, Argo CD's UI and its logs), where anyone who may read
// them reads the secret. Every string an object of the build holds beside
// virtc's own comes from these scalars, so scanning them is scanning the
// output, with the file, line and column of each. Inline cloud-init is
// the cloudInit guardrail's (internal/rules, cloudInitSecrets), which
// the cluster enforces too: it is left to it.
func (d *decoder) secrets(n *yaml.Node) {
	var at []string
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				at = append(at, k.Value)
				if d.kind == "VM" && len(at) == 3 && at[0] == "spec" && at[1] == "cloudInit" && at[2] == "userData" {
					at = at[:len(at)-1]
					continue
				}
				d.secretIn(k, at, true)
				walk(v)
				at = at[:len(at)-1]
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				at = append(at, "["+strconv.Itoa(i)+"]")
				walk(c)
				at = at[:len(at)-1]
			}
		case yaml.ScalarNode:
			d.secretIn(n, at, false)
		}
	}
	walk(n)
}

// secretIn reports the secret material of one scalar, a key or a value,
// at the field path at; the message names what it is, never the value.
func (d *decoder) secretIn(n *yaml.Node, at []string, key bool) {
	found := secret.Find(n.Value)
	if len(found) == 0 {
		return
	}
	path := fieldPath(at)
	what := "holds"
	if key {
		what = "is named by a key that holds"
	}
	d.diags.Errorf(d.pos(n, path), path, "%s %s: secrets must not be in Git, and this value would reach the cluster's objects, where whoever may read them reads it (keep the secret in a Secret of the cluster, created there or by an external secrets operator, and name that Secret where the field allows it)", what, strings.Join(found, ", "))
}

// fieldPath joins path segments as messages name fields: spec.disks[0].name.
func fieldPath(at []string) string {
	var b strings.Builder
	for i, s := range at {
		if i > 0 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}
