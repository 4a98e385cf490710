package argocd

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
)

// syncKubeVirt runs one round of the stand-ins beside the real virt-api,
// virt-controller and cdi-controller of a cluster (clusterSpec.kubevirt),
// in every namespace that has their objects: the clone of each DataVolume
// virt-controller creates from a VM's template, from the golden image's
// DataSource once CDI says it is Ready, which needs cdi-apiserver's clone
// token and the cloner pods (controllers.Clones: it leaves the populated
// claim, which CDI's real DataVolume controller adopts and marks
// Succeeded); the volumes and importer pods (controllers.Volumes: binds
// claims, ends importer pods CDI creates); and the node agent, which binds
// and starts the virt-launcher pods virt-controller renders and hands
// their VMIs over as virt-handler would (controllers.Node).
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
	for _, ns := range namespaces {
		if err := c.clones.Sync(ctx, ns); err != nil {
			errs = append(errs, err)
		}
		if err := c.volumes.Sync(ctx, ns); err != nil {
			errs = append(errs, err)
		}
		if err := c.nodes.Sync(ctx, ns); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
