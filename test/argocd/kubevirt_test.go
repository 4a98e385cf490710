package argocd

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
)

// syncKubeVirt runs one round of the stand-ins beside the real virt-api,
// virt-controller and cdi-controller of a cluster (clusterSpec.kubevirt):
// cluster-wide, what CDI's host-assisted clone of each DataVolume
// virt-controller creates from a VM's template needs and cannot have here
// (controllers.HostClones: cdi-apiserver's clone token, the upload server
// and cloner pods run and ended; CDI creates the claim, the pods and the
// DataVolume's phase itself), and in every namespace that has their
// objects the volumes (controllers.Volumes: binds the claims CDI creates,
// ends importer pods) and the node agent, which binds and starts the
// virt-launcher pods virt-controller renders and hands their VMIs over as
// virt-handler would (controllers.Node).
func (c *cluster) syncKubeVirt(ctx context.Context) error {
	var namespaces []string
	for _, path := range []string{
		"/apis/cdi.kubevirt.io/v1beta1/datavolumes",
		"/apis/kubevirt.io/v1/virtualmachineinstances",
		"/api/v1/pods?labelSelector=" + url.QueryEscape("kubevirt.io=virt-launcher"),
	} {
		data, err := c.cp.Get(ctx, path)
		if err != nil {
			return err
		}
		var l struct {
			Items []struct {
				Metadata struct {
					Namespace string `json:"namespace"`
				} `json:"metadata"`
			} `json:"items"`
		}
		if err := json.Unmarshal(data, &l); err != nil {
			return err
		}
		for _, it := range l.Items {
			if !slices.Contains(namespaces, it.Metadata.Namespace) {
				namespaces = append(namespaces, it.Metadata.Namespace)
			}
		}
	}
	var errs []error
	if err := c.clones.Sync(ctx); err != nil {
		errs = append(errs, err)
	}
	for _, ns := range namespaces {
		if err := c.volumes.Sync(ctx, ns); err != nil {
			errs = append(errs, err)
		}
		if err := c.nodes.Sync(ctx, ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
