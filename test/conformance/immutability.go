package conformance

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// CDI's DataVolume admission webhook refuses every change of a
// DataVolume's spec (containerized-data-importer v1.65.0,
// pkg/apiserver/webhooks/datavolume-validate.go, Admit: on UPDATE, unless
// only the checkpoints of a multi-stage VDDK/ImageIO import change, a spec
// that is not semantically equal to the old one is rejected with "Cannot
// update DataVolume Spec"). The test server runs no CDI, so this
// ValidatingAdmissionPolicy stands in for that rule: an output (or a change
// step) that changes a DataVolume's spec is refused here as CDI would
// refuse it in a cluster, where Argo CD's sync would then fail on every
// attempt.

// DataVolumeImmutabilityName names the policy and its binding.
const DataVolumeImmutabilityName = "virtc-conformance-cdi-datavolume-spec-immutable"

// DataVolumeSpecRule is the policy's CEL expression.
const DataVolumeSpecRule = "object.spec == oldObject.spec"

// DataVolumeSpecMessage is CDI's own rejection message.
const DataVolumeSpecMessage = "Cannot update DataVolume Spec"

// DataVolumeImmutability is the policy and its binding, applied to every
// test server before any output.
var DataVolumeImmutability = fmt.Sprintf(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: %[1]s
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [cdi.kubevirt.io]
      apiVersions: ["*"]
      operations: [UPDATE]
      resources: [datavolumes]
  validations:
  - expression: %[2]q
    message: %[3]q
    reason: Invalid
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: %[1]s
spec:
  policyName: %[1]s
  validationActions: [Deny]
`, DataVolumeImmutabilityName, DataVolumeSpecRule, DataVolumeSpecMessage)

// immutabilityProbe is a DataVolume in two versions whose specs differ.
func immutabilityProbe(size string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: probe, namespace: %s}
spec:
  source: {blank: {}}
  storage: {resources: {requests: {storage: %s}}}
`, probeNamespace, size))
}

const probeNamespace = "conformance-immutability-probe"

// InstallDataVolumeImmutability applies the policy and waits until the
// server enforces it: the API server loads policies asynchronously, so a
// probe DataVolume's spec is changed until the update is refused with
// CDI's message (which also shows that the policy denies, not just
// exists).
func (c *Cluster) InstallDataVolumeImmutability(ctx context.Context) error {
	if _, err := c.Apply(ctx, []byte(DataVolumeImmutability)); err != nil {
		return fmt.Errorf("install the DataVolume immutability policy: %w", err)
	}
	ns := []byte(fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", probeNamespace))
	nsObjs, err := c.Apply(ctx, ns)
	if err != nil {
		return err
	}
	probe, err := c.Apply(ctx, immutabilityProbe("1Gi"))
	if err != nil {
		return fmt.Errorf("create the probe DataVolume: %w", err)
	}
	defer func() {
		ctx := context.WithoutCancel(ctx)
		_ = c.Delete(ctx, probe)
		_ = c.Delete(ctx, nsObjs)
	}()
	deadline := time.Now().Add(30 * time.Second)
	size := "1Gi"
	for {
		next := "2Gi"
		if size == next {
			next = "1Gi"
		}
		_, err := c.Apply(ctx, immutabilityProbe(next))
		switch {
		case err == nil:
			// Accepted: the server has not loaded the policy yet.
			size = next
		case strings.Contains(err.Error(), DataVolumeSpecMessage):
			return nil
		default:
			return fmt.Errorf("changing the probe DataVolume's spec failed, but not with %q: %w", DataVolumeSpecMessage, err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the DataVolume immutability policy is not enforced after 30s: the probe DataVolume's spec could still be changed")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
