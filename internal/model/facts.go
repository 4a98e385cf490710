package model

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/extapi"
	"github.com/virtc/virtc/internal/resolve"
)

var evictionStrategies = map[string]kubevirtv1.EvictionStrategy{
	api.MigrationRequired:   kubevirtv1.EvictionStrategyLiveMigrate,
	api.MigrationIfPossible: kubevirtv1.EvictionStrategyLiveMigrateIfPossible,
	api.MigrationNever:      kubevirtv1.EvictionStrategyNone,
}

// EvictionStrategy is what KubeVirt does with the VM when its node drains.
// A VM that asks to migrate if possible but cannot gets None: claiming
// LiveMigrateIfPossible would promise what cannot happen. One that asks
// for migration Required keeps LiveMigrate: the rules refuse it when it
// cannot migrate, so that only render.Unchecked writes that, as what the
// intent asks of the cluster.
func EvictionStrategy(vm *resolve.VM) kubevirtv1.EvictionStrategy {
	if vm.Migration != api.MigrationRequired && !vm.CanMigrate() {
		return kubevirtv1.EvictionStrategyNone
	}
	return evictionStrategies[vm.Migration]
}

// Architecture is the VM's CPU architecture: its preference's, amd64 when
// the preference names none.
func Architecture(vm *resolve.VM) string {
	if p := vm.Preference; p != nil && p.Spec.Architecture != "" {
		return p.Spec.Architecture
	}
	return "amd64"
}

// GuestHealth reports whether the VM gets guest-level health probes: its
// image runs the QEMU guest agent.
func GuestHealth(vm *resolve.VM) bool {
	return vm.Image != nil && vm.Image.Spec.GuestAgent
}

// uuidNamespace is virtc's namespace for name-based (v5) firmware UUIDs.
var uuidNamespace = uuid.MustParse("8a1d4b5e-3c2f-5e0a-9b7d-6f4e2c1a0b3d")

// FirmwareUUID is the VM's SMBIOS UUID, derived from namespace and name:
// KubeVirt's webhook would otherwise pick a random one on create, which Argo
// CD reports as drift and which changes when a VM is re-created.
func FirmwareUUID(namespace, name string) string {
	return uuid.NewSHA1(uuidNamespace, []byte(namespace+"/"+name)).String()
}

// FirmwareSerial is the VM's SMBIOS serial number, derived like its UUID.
func FirmwareSerial(namespace, name string) string {
	sum := sha256.Sum256([]byte("serial/" + namespace + "/" + name))
	return hex.EncodeToString(sum[:10])
}

// Tolerations are the tolerations of a pool's taints: Equal to a taint's
// value, or Exists for a taint without one.
func Tolerations(taints []api.Taint) []corev1.Toleration {
	var out []corev1.Toleration
	for _, t := range taints {
		tol := corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		if t.Value == "" {
			tol.Operator = corev1.TolerationOpExists
		}
		out = append(out, tol)
	}
	return out
}

// CloudInit is the VM's cloud-init NoCloud source as virtc writes it (nil:
// the VM has no cloud-init disk): user and network data from Secrets, or
// inline. SSH keys propagated through NoCloud need the volume even without
// user data.
func CloudInit(vm *resolve.VM) *kubevirtv1.CloudInitNoCloudSource {
	ci := vm.Spec.CloudInit
	if ci == nil || ci.UserDataSecret == "" && ci.NetworkDataSecret == "" && ci.UserData == "" {
		// Keys propagated through the guest agent need no cloud-init.
		if len(vm.Spec.SSHKeySecrets) == 0 || len(vm.Spec.SSHKeyGuestAgentUsers) > 0 {
			return nil
		}
		return &kubevirtv1.CloudInitNoCloudSource{UserData: "#cloud-config\n"}
	}
	src := &kubevirtv1.CloudInitNoCloudSource{}
	switch {
	case ci.UserDataSecret != "":
		src.UserDataSecretRef = &corev1.LocalObjectReference{Name: ci.UserDataSecret}
	case ci.UserData != "" && ci.UserDataEncoding == "base64":
		// virtctl create vm --cloud-init-user-data: the same data, encoded.
		src.UserDataBase64 = base64.StdEncoding.EncodeToString([]byte(ci.UserData))
	case ci.UserData != "":
		// Checked by the rules to hold no secret material.
		src.UserData = ci.UserData
	default:
		src.UserData = "#cloud-config\n"
	}
	if ci.NetworkDataSecret != "" {
		src.NetworkDataSecretRef = &corev1.LocalObjectReference{Name: ci.NetworkDataSecret}
	}
	return src
}

// NAD is a NetworkAttachmentDefinition virtc writes into a tenant's
// namespace: a Linux bridge profile the tenant may use.
type NAD struct {
	// Name is the profile's, and the attachment's.
	Name string
	// Profile is the catalog entry.
	Profile *api.NetworkProfile
	// Config is its spec.config, the CNI configuration.
	Config string
}

// bridgeConfig is the CNI configuration of a Linux bridge attachment.
type bridgeConfig struct {
	CNIVersion                string `json:"cniVersion"`
	Name                      string `json:"name"`
	Type                      string `json:"type"`
	Bridge                    string `json:"bridge"`
	VLAN                      *int64 `json:"vlan,omitempty"`
	MACSpoofCheck             bool   `json:"macspoofchk"`
	DisableContainerInterface bool   `json:"disableContainerInterface"`
	PreserveDefaultVLAN       bool   `json:"preserveDefaultVlan"`
}

// TenantNADs are the network attachments virtc writes into a tenant's
// namespace, in catalog order: one per bridge profile the tenant may use
// (the live-migration network, which has an IP range, is the platform's).
func TenantNADs(m *resolve.Model, t *resolve.Tenant) []NAD {
	var out []NAD
	for _, name := range m.Catalog.NetworkProfiles.Names() {
		e, _ := m.Catalog.NetworkProfiles.Entry(name)
		br := e.Obj.Spec.Bridge
		if e.Obj.Spec.Type != api.NetworkBridge || br == nil || br.IPRange != "" || !t.AllowsNetwork(name, e.Obj) {
			continue
		}
		cfg, _ := json.Marshal(bridgeConfig{
			CNIVersion: "0.3.1", Name: name, Type: "bridge", Bridge: br.Name, VLAN: br.VLAN,
			MACSpoofCheck: true, DisableContainerInterface: true,
		})
		out = append(out, NAD{Name: name, Profile: e.Obj, Config: string(cfg)})
	}
	return out
}

// UDN is the UserDefinedNetwork virtc writes into a tenant's namespace:
// its primary network.
type UDN struct {
	Name string
	Spec extapi.UserDefinedNetworkSpec
}

// TenantUDN is the tenant's primary network (nil when it has none, or a
// primary network virtc does not write as a UserDefinedNetwork).
func TenantUDN(t *resolve.Tenant) *UDN {
	pn := t.PrimaryNetwork
	if pn == nil || pn.Spec.Layer2 == nil {
		return nil
	}
	return &UDN{Name: pn.Name, Spec: extapi.UserDefinedNetworkSpec{
		Topology: "Layer2",
		Layer2: &extapi.Layer2Config{
			Role:    "Primary",
			Subnets: pn.Spec.Layer2.Subnets,
			// VMs keep their addresses across restarts and migrations.
			IPAM: &extapi.IPAMConfig{Lifecycle: "Persistent"},
		},
	}}
}
