package model

import (
	"crypto/sha256"
	"encoding/hex"
)

// DiskName is the name of a VM's data disk claim.
func DiskName(vm, disk string) string { return vm + "-" + disk }

// RootDiskName is the name of a VM's root disk DataVolume (and claim).
func RootDiskName(vm string) string { return vm + "-root" }

// ScheduleName is the name of the Schedule of a tenant's backup policy.
func ScheduleName(tenant, policy string) string { return limitName(tenant + "-" + policy) }

// OnDemandBackupName is the deterministic name of a VM's one-off backup.
func OnDemandBackupName(namespace, vm, label string) string {
	return limitName(namespace + "-" + vm + "-" + label)
}

// SnapshotName is the deterministic name of a VM's snapshot before a risky
// change (spec.snapshotBefore).
func SnapshotName(vm, label string) string { return limitName(vm + "-" + label) }

// QuotaName is the name of the tenant's ResourceQuota.
const QuotaName = "virtc-vms"

// GuardrailPolicyName names a tenant's guardrails policy and its binding.
func GuardrailPolicyName(tenant string) string { return "virtc-tenant-" + tenant }

// LimitName keeps a name within 63 characters (Velero copies it into label
// values), replacing the tail by a hash of the whole when it is longer.
func LimitName(name string) string { return limitName(name) }

func limitName(name string) string {
	if len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:52] + "-" + hex.EncodeToString(sum[:])[:10]
}
