package diff

import (
	"fmt"

	"github.com/virtc/virtc/fn/compile"
)

// publishedKinds are cluster-scoped objects that VMs pin: KubeVirt stores a
// ControllerRevision of the instance type and preference a VM was created
// with and keeps using it, so an edit in place does not reach existing VMs
// and makes VMs of the same size differ.
var publishedKinds = map[string]string{
	"VirtualMachineClusterInstancetype": "instance type",
	"VirtualMachineClusterPreference":   "preference",
}

// platform checks the cluster-scoped objects of the platform catalog.
func (c *comparison) platform(base, head compile.Result) {
	for _, o := range c.objects {
		what, published := publishedKinds[o.Kind]
		if !published || o.Status != Changed {
			continue
		}
		c.refuse("published-edited", o.Ref(),
			fmt.Sprintf("the published %s %s is edited in place: KubeVirt pins every VM to a ControllerRevision of the %s it was created with, so existing VMs keep the old definition while new ones get the new", what, o.Name, what),
			fmt.Sprintf("leave %s as it is and publish the new definition under a new name (for example %s-v2), then move VMs to it", o.Name, o.Name))
	}
}
