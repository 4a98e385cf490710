package diff

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

// platform checks the cluster side: the OpenShift Virtualization version
// and the instance types and preferences the catalog publishes.
func (c *comparison) platform(base, head compile.Result) {
	c.version(platformOf(base.Model), platformOf(head.Model))
	c.graph(platformOf(head.Model))
	if old, new := platformOf(base.Model), platformOf(head.Model); old != nil && new != nil {
		c.catalog(old, new)
		if path, err := olmPath(old.Version, new.Version, new); err == nil && len(path) > 0 {
			c.upgrade(head.Model, old, new, path)
		}
	}
	c.published(catalogOf(base.Model), catalogOf(head.Model))
}

func platformOf(m *resolve.Model) *resolve.Platform {
	if m == nil {
		return nil
	}
	return m.Platform
}

func catalogOf(m *resolve.Model) *catalog.Catalog {
	if m == nil {
		return nil
	}
	return m.Catalog
}

// version refuses a platform version that goes down, that skips a minor
// release OpenShift upgrades through, or on which OLM's upgrade does not
// land. OLM moves an operator forward only, to the bundle nearest the
// channel head whose replaces or olm.skipRange names the installed CSV
// (operator-lifecycle-manager v0.42.0 pkg/controller/registry/resolver/
// resolver.go getSubscriptionVariables and sortChannel; solver/
// constraints.go: earlier candidates are preferred), in the catalog the
// new side installs from (versions.Path on the head's CatalogHead). Nothing
// in OLM downgrades an installed operator.
func (c *comparison) version(old, new *resolve.Platform) {
	switch {
	case old == nil && new == nil:
		return
	case old == nil:
		c.report.Platform = append(c.report.Platform, Change{Field: "version", To: new.Version.String(), Effect: EffectCreated,
			Detail: fmt.Sprintf("OpenShift Virtualization %s is installed (channel %s)", new.Version, new.Release.Channel)})
		return
	case new == nil:
		c.report.Platform = append(c.report.Platform, Change{Field: "platform", From: old.Version.String(), Effect: EffectDeleted,
			Detail: fmt.Sprintf("the Platform %s (OpenShift Virtualization %s) is no longer compiled here", old.Name, old.Version)})
		c.warn("platform-removed", ref("Platform", "", old.Name),
			fmt.Sprintf("the Platform %s is removed: Argo CD would delete the operator's Subscription and the HyperConverged (which its uninstall strategy blocks while VMs exist)", old.Name),
			"if the Platform moved to another repository, make sure that repository's Application adopts its objects before this one prunes them")
		return
	}
	from, to := old.Version, new.Version
	obj := ref("Platform", "", new.Name)
	if from == to {
		return
	}
	_, err := olmPath(from, to, new)
	var pe *versions.PathError
	var ue *versions.UnreachableError
	switch {
	case errors.As(err, &pe) && pe.Downgrade:
		c.report.Platform = append(c.report.Platform, Change{Field: "version", From: from.String(), To: to.String(), Effect: EffectRefused,
			Detail: fmt.Sprintf("OpenShift Virtualization %s → %s: a downgrade, refused", from, to)})
		c.refuse("platform-downgrade", obj,
			fmt.Sprintf("the platform version goes down %s → %s: OLM does not downgrade an installed operator", from, to),
			fmt.Sprintf("keep spec.version at %s or later; going back means restoring the cluster, not a pull request", from))
	case errors.As(err, &ue):
		c.report.Platform = append(c.report.Platform, Change{Field: "version", From: from.String(), To: to.String(), Effect: EffectRefused,
			Detail: fmt.Sprintf("OpenShift Virtualization %s → %s: OLM's upgrade does not land on %s, refused", from, to, to)})
		fix := fmt.Sprintf("pin %s, where OLM lands, or name an index image pinned by digest whose kubevirt-hyperconverged channel head is %s in spec.catalogSource", landing(ue.Route), to)
		c.refuse("platform-upgrade-unreachable", obj,
			fmt.Sprintf("the platform version goes %s → %s, but in the catalog %s (channel head %s, graph of %s), %s: the approver refuses that before approving anything, and the cluster stays on %s", from, to, catalogName(new), new.CatalogHead, new.Graph, ue.Route.Explain(), from),
			fix)
	case err != nil:
		c.report.Platform = append(c.report.Platform, Change{Field: "version", From: from.String(), To: to.String(), Effect: EffectRefused,
			Detail: fmt.Sprintf("OpenShift Virtualization %s → %s: skips what OLM upgrades through, refused", from, to)})
		via := new.Release.UpgradesFrom
		c.refuse("platform-upgrade-skip", obj,
			fmt.Sprintf("the platform version jumps %s → %s: OLM upgrades into %s only from %s, one minor release at a time", from, to, new.Release.Minor, strings.Join(via, ", ")),
			fmt.Sprintf("upgrade to a %s release first, let it settle, then to %s", strings.Join(via, " or "), to))
	case from.MinorString() == to.MinorString():
		c.report.Platform = append(c.report.Platform, Change{Field: "version", From: from.String(), To: to.String(), Effect: EffectNone,
			Detail: fmt.Sprintf("OpenShift Virtualization %s → %s: a z-stream update within %s", from, to, to.MinorString())})
	default:
		c.report.Platform = append(c.report.Platform, Change{Field: "version", From: from.String(), To: to.String(), Effect: EffectNone,
			Detail: fmt.Sprintf("OpenShift Virtualization %s → %s: a minor upgrade from %s (HCO %s → %s, KubeVirt %s → %s, CDI %s → %s)", from, to, from.MinorString(), old.Release.HCO, new.Release.HCO, old.Release.KubeVirt, new.Release.KubeVirt, old.Release.CDI, new.Release.CDI)})
	}
}

// published refuses an edit in place of an instance type or preference
// the catalog publishes (not the builtin ones OpenShift Virtualization
// installs). KubeVirt stores a ControllerRevision of the instance type and
// preference each VM was created with and keeps using it (the user guide,
// "Versioning"), so an edit reaches new VMs only and VMs of one size stop
// being alike.
func (c *comparison) published(old, new *catalog.Catalog) {
	if old == nil || new == nil {
		return
	}
	for _, name := range old.Sizes.Names() {
		o, _ := old.Sizes.Get(name)
		n, ok := new.Sizes.Get(name)
		if !ok || o.Spec.Builtin || n.Spec.Builtin || sameShape(o.Spec, n.Spec) {
			continue
		}
		c.refuse("published-edited", ref("VirtualMachineClusterInstancetype", "", name),
			fmt.Sprintf("the published size %s is edited in place (%s → %s): KubeVirt pins every VM to a ControllerRevision of the instance type it was created with, so existing VMs keep the old definition while new ones get the new", name, sizeTerms(o), sizeTerms(n)),
			fmt.Sprintf("leave %s as it is and publish the new definition under a new name (for example %s-v2), then move VMs to it", name, name))
	}
	for _, name := range old.Preferences.Names() {
		o, _ := old.Preferences.Get(name)
		n, ok := new.Preferences.Get(name)
		if !ok || o.Spec.Builtin || n.Spec.Builtin || reflect.DeepEqual(o.Spec, n.Spec) {
			continue
		}
		c.refuse("published-edited", ref("VirtualMachineClusterPreference", "", name),
			fmt.Sprintf("the published preference %s is edited in place: KubeVirt pins every VM to a ControllerRevision of the preference it was created with, so existing VMs keep the old definition while new ones get the new", name),
			fmt.Sprintf("leave %s as it is and publish the new definition under a new name, then point the images at it", name))
	}
}

// sameShape compares what a published size puts in its instance type:
// whether tenants may use it (restricted) is not part of it.
func sameShape(a, b api.SizeSpec) bool {
	a.Restricted, b.Restricted = false, false
	return reflect.DeepEqual(a, b)
}

// catalog reports a change of the catalog the Subscriptions install from,
// or of its channel head: where OLM's upgrades land from then on.
func (c *comparison) catalog(old, new *resolve.Platform) {
	from, to := catalogName(old), catalogName(new)
	// The default catalog's head follows the minor: not a change of its own.
	if from == to && (old.CatalogHead == new.CatalogHead || new.Obj.Spec.CatalogSource == nil) {
		return
	}
	c.report.Platform = append(c.report.Platform, Change{Field: "catalog", From: fmt.Sprintf("%s (head %s)", from, old.CatalogHead), To: fmt.Sprintf("%s (head %s)", to, new.CatalogHead), Effect: EffectNone,
		Detail: fmt.Sprintf("the Subscriptions install from %s, whose kubevirt-hyperconverged channel head is %s (was %s, head %s): OLM's upgrades land on that head or on a minor's first bundle", to, new.CatalogHead, from, old.CatalogHead)})
}

// landing is where OLM's upgrade ends on the way to the pin: the CSV it
// offers past the pin, or the last one it installs.
func landing(r *versions.Route) versions.Version {
	if r.Past != nil {
		return r.Past.Version
	}
	if n := len(r.Steps); n > 0 {
		return r.Steps[n-1].Version
	}
	return r.From
}

// olmPath is OLM's path from one version to another in the channel the
// new side installs from (Platform.Channel: the catalog's graph among the
// inputs, or the table's).
func olmPath(from, to versions.Version, new *resolve.Platform) ([]versions.Version, error) {
	if from == to {
		return nil, nil
	}
	if err := versions.CheckMinors(from, to); err != nil {
		return nil, err
	}
	return versions.PathIn(new.Channel, from, to)
}

// graph warns when the catalog's graph among the head's inputs is ahead
// of virtc's version table: z-streams (or a minor) the table does not
// know, which virtc compiles with their minor's facts.
func (c *comparison) graph(new *resolve.Platform) {
	if new == nil || new.Graph == resolve.GraphTable || new.Channel == nil {
		return
	}
	var ahead []string
	for _, b := range new.Channel.Bundles {
		if _, _, err := versions.Lookup(b.Version.String()); err != nil {
			ahead = append(ahead, b.Version.String())
		}
	}
	if len(ahead) == 0 {
		return
	}
	slices.Reverse(ahead)
	c.warn("catalog-ahead-of-table", ref("Platform", "", new.Name),
		fmt.Sprintf("%s is ahead of this virtc's version table (%s): it has %s, which the table does not know; OLM's route above is on the catalog, and a pin the table does not know compiles with its minor's facts", new.Graph, versions.SupportedList(), strings.Join(ahead, ", ")),
		"upgrade virtc when its table knows these versions, and render the catalog again (virtc olm-graph) when Red Hat publishes the next z-stream")
}

// catalogName names the catalog a Platform's Subscriptions install from.
func catalogName(p *resolve.Platform) string {
	if cs := p.Obj.Spec.CatalogSource; cs != nil {
		return cs.Image
	}
	return "redhat-operators"
}
