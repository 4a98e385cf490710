package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/catalog"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/resolve"
	"github.com/virtc/virtc/internal/versions"
)

// catalogView is what `virtc catalog` shows, also as JSON.
type catalogView struct {
	Sizes     []sizeView    `json:"sizes"`
	Images    []imageView   `json:"images"`
	Networks  []networkView `json:"networkProfiles"`
	Storage   []storageView `json:"storageProfiles"`
	Backups   []backupView  `json:"backupPolicies"`
	Pools     []poolView    `json:"workerPools,omitempty"`
	Platforms []string      `json:"supportedPlatformVersions"`
}

type sizeView struct {
	Name      string `json:"name"`
	CPU       int64  `json:"cpu"`
	Memory    string `json:"memory"`
	Published string `json:"published"`
	// Needs lists excluded features the size needs the Platform to enable.
	Needs []string `json:"needs,omitempty"`
}

type imageView struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Pin         string `json:"pin,omitempty"`
	Preference  string `json:"preference"`
	MinRootDisk string `json:"minRootDisk"`
	// MinCPU and MinMemory are the preference's requirements: the smallest
	// size a VM of the image may have.
	MinCPU    int64  `json:"minCPU,omitempty"`
	MinMemory string `json:"minMemory,omitempty"`
	// VMState says the preference keeps persistent EFI or TPM state on a
	// backend-storage PVC.
	VMState bool `json:"vmState,omitempty"`
}

type networkView struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Migratable bool   `json:"migratable"`
	Details    string `json:"details,omitempty"`
}

type storageView struct {
	Name         string `json:"name"`
	StorageClass string `json:"storageClass"`
	VolumeMode   string `json:"volumeMode"`
	AccessMode   string `json:"accessMode"`
	Default      bool   `json:"default"`
	Snapshots    bool   `json:"snapshots"`
}

type backupView struct {
	Name      string `json:"name"`
	Schedule  string `json:"schedule"`
	Retention string `json:"retention,omitempty"`
	Default   bool   `json:"default"`
}

type poolView struct {
	Name     string   `json:"name"`
	Nodes    int64    `json:"nodes"`
	CPU      string   `json:"allocatableCPU"`
	Memory   string   `json:"allocatableMemory"`
	Domains  string   `json:"failureDomains"`
	CPUModel string   `json:"cpuModel,omitempty"`
	Networks []string `json:"networks,omitempty"`
	Storage  []string `json:"storage,omitempty"`
	Default  bool     `json:"default"`
}

func runCatalog(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("catalog", "[PATH...]", stderr)
	noDefaults := fs.Bool("no-default-catalog", false, "leave the embedded default catalog out")
	tenant := fs.String("tenant", "", "show only what this Tenant (from the PATHs) may use")
	format := fs.String("format", "text", "text or json")
	fs.StringVar(format, "o", *format, "the same as --format (kubectl's -o)")
	extVars := addJsonnetFlags(fs)
	paths, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	ext, err := extVars()
	if err != nil {
		fmt.Fprintf(stderr, "virtc catalog: %v\n", err)
		return ExitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "virtc catalog: unknown format %q (text or json)\n", *format)
		return ExitUsage
	}
	req, ok := request(api.CompilerSpec{Paths: paths, NoDefaultCatalog: *noDefaults, ExtStr: ext}, place{}, stderr)
	if !ok {
		return ExitFailed
	}
	diags := &diag.List{}
	set := decode.Decode(req.Read(diags), true, diags)
	cat := catalog.Build(set, catalog.Options{NoDefaults: req.NoDefaultCatalog}, diags)
	var allow *resolve.Tenant
	if *tenant != "" {
		m := resolve.Resolve(set, cat, &diag.List{})
		for _, t := range m.Tenants {
			if t.Name == *tenant {
				allow = t
			}
		}
		if allow == nil {
			diags.Errorf(diag.Pos{File: "<inputs>"}, "", "no Tenant %q in the inputs", *tenant)
		}
	}
	if diags.HasErrors() {
		return report(compile.Result{Diags: diags}, stderr)
	}
	v := view(cat, allow)
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "virtc: %v\n", err)
			return ExitFailed
		}
		return ExitOK
	}
	writeCatalog(stdout, v)
	return ExitOK
}

func view(cat *catalog.Catalog, t *resolve.Tenant) catalogView {
	var v catalogView
	allowed := func(list func(*api.TenantAllow) []string, name string, restricted bool) bool {
		if t == nil {
			return true
		}
		var l []string
		if t.Spec.Allow != nil {
			l = list(t.Spec.Allow)
		}
		return resolve.Allows(l, name, restricted)
	}
	for _, n := range cat.Sizes.Names() {
		s, _ := cat.Sizes.Get(n)
		if !allowed(func(a *api.TenantAllow) []string { return a.Sizes }, n, s.Spec.Restricted) {
			continue
		}
		pub := "virtc"
		if s.Spec.Builtin {
			pub = "builtin"
		}
		var needs []string
		if len(s.Spec.GPUs) > 0 {
			needs = append(needs, "gpu")
		}
		if s.Spec.DedicatedCPU {
			needs = append(needs, "dedicatedCPU")
		}
		if s.Spec.Hugepages != "" {
			needs = append(needs, "hugepages")
		}
		v.Sizes = append(v.Sizes, sizeView{n, s.Spec.CPU, s.Spec.Memory.String(), pub, needs})
	}
	for _, n := range cat.Images.Names() {
		img, _ := cat.Images.Get(n)
		if !allowed(func(a *api.TenantAllow) []string { return a.Images }, n, img.Spec.Restricted) {
			continue
		}
		iv := imageView{Name: n, Preference: img.Spec.Preference, MinRootDisk: img.Spec.MinRootDisk.String()}
		if p, ok := cat.Preferences.Get(img.Spec.Preference); ok {
			if r := p.Spec.Requirements; r != nil {
				iv.MinCPU = r.CPU
				if r.Memory != nil {
					iv.MinMemory = r.Memory.String()
				}
			}
			iv.VMState = p.Spec.NeedsBackendStorage()
		}
		switch s := img.Spec; {
		case s.Registry != nil:
			url, digest, _ := strings.Cut(s.Registry.URL, "@")
			iv.Source, iv.Pin = url, digest
		case s.HTTP != nil:
			iv.Source, iv.Pin = s.HTTP.URL, s.HTTP.Checksum
		default:
			ds := resolve.ImageDataSource(n, img, cat)
			iv.Source = "DataSource " + ds.Namespace + "/" + ds.Name
			if s.DataSource != nil && s.DataSource.ManagedBy == api.ManagedByHyperConverged {
				// Not pinned: HCO's DataImportCron re-points it.
				iv.Source += " (HyperConverged, auto-updated)"
			}
		}
		v.Images = append(v.Images, iv)
	}
	for _, n := range cat.NetworkProfiles.Names() {
		p, _ := cat.NetworkProfiles.Get(n)
		migrationOnly := p.Spec.Bridge != nil && p.Spec.Bridge.IPRange != ""
		if t != nil && (!t.AllowsNetwork(n, p) || migrationOnly) {
			continue
		}
		nv := networkView{Name: n, Type: p.Spec.Type, Migratable: p.Spec.Migratable}
		switch s := p.Spec; {
		case migrationOnly:
			nv.Details = "bridge " + s.Bridge.Name + vlan(s.Bridge.VLAN) + ", live-migration network (ipRange " + s.Bridge.IPRange + "), not for VMs"
		case s.Bridge != nil:
			nv.Details = "bridge " + s.Bridge.Name + vlan(s.Bridge.VLAN)
		case s.Localnet != nil:
			nv.Details = "physical network " + s.Localnet.PhysicalNetworkName + vlan(s.Localnet.VLAN)
		case s.Layer2 != nil:
			nv.Details = "subnets " + strings.Join(s.Layer2.Subnets, ", ")
		}
		v.Networks = append(v.Networks, nv)
	}
	for _, n := range cat.StorageProfiles.Names() {
		p, _ := cat.StorageProfiles.Get(n)
		if !allowed(func(a *api.TenantAllow) []string { return a.Storage }, n, p.Spec.Restricted) {
			continue
		}
		v.Storage = append(v.Storage, storageView{n, p.Spec.StorageClass, p.Spec.VolumeMode, p.Spec.AccessMode, n == cat.DefaultStorage, p.Spec.Snapshots})
	}
	for _, n := range cat.BackupPolicies.Names() {
		p, _ := cat.BackupPolicies.Get(n)
		sched := p.Spec.Schedule
		if sched == "" {
			sched = "(no backups)"
		}
		v.Backups = append(v.Backups, backupView{n, sched, p.Spec.Retention, n == cat.DefaultBackup})
	}
	for _, n := range cat.WorkerPools.Names() {
		p, _ := cat.WorkerPools.Get(n)
		if !allowed(func(a *api.TenantAllow) []string { return a.Pools }, n, p.Spec.Restricted) {
			continue
		}
		domains := "hosts"
		if fd := p.Spec.FailureDomain; fd != nil {
			domains = fmt.Sprintf("%d %ss", fd.Domains, fd.Level)
		}
		v.Pools = append(v.Pools, poolView{n, p.Spec.Nodes, p.Spec.Allocatable.CPU.String(), p.Spec.Allocatable.Memory.String(), domains, p.Spec.CPUModel, p.Spec.Networks, p.Spec.Storage, n == cat.DefaultPool})
	}
	for _, r := range versions.Releases() {
		v.Platforms = append(v.Platforms, r.Supported())
	}
	return v
}

func vlan(v *int64) string {
	if v == nil {
		return ""
	}
	return fmt.Sprintf(", VLAN %d", *v)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func writeCatalog(w io.Writer, v catalogView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	section := func(title, header string) {
		fmt.Fprintf(tw, "%s\n%s\n", title, header)
	}
	section("SIZES", "NAME\tVCPU\tMEMORY\tPUBLISHED BY\tNEEDS (excluded unless enabled)")
	for _, s := range v.Sizes {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", s.Name, s.CPU, s.Memory, s.Published, dash(strings.Join(s.Needs, ", ")))
	}
	section("\nIMAGES", "NAME\tSOURCE\tDIGEST OR CHECKSUM\tPREFERENCE\tMIN SIZE\tVM STATE\tMIN ROOT DISK")
	for _, i := range v.Images {
		minSize := ""
		if i.MinCPU > 0 || i.MinMemory != "" {
			minSize = fmt.Sprintf("%d vCPU, %s", max(i.MinCPU, 1), dash(i.MinMemory))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, i.Source, dash(i.Pin), i.Preference, dash(minSize), yes(i.VMState), i.MinRootDisk)
	}
	section("\nNETWORK PROFILES", "NAME\tTYPE\tMIGRATABLE\tDETAILS")
	for _, n := range v.Networks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.Name, n.Type, yes(n.Migratable), dash(n.Details))
	}
	section("\nSTORAGE PROFILES", "NAME\tSTORAGE CLASS\tVOLUME MODE\tACCESS MODE\tDEFAULT\tSNAPSHOTS")
	for _, s := range v.Storage {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.StorageClass, s.VolumeMode, s.AccessMode, yes(s.Default), yes(s.Snapshots))
	}
	section("\nBACKUP POLICIES", "NAME\tSCHEDULE (UTC)\tRETENTION\tDEFAULT")
	for _, b := range v.Backups {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", b.Name, b.Schedule, dash(b.Retention), yes(b.Default))
	}
	if len(v.Pools) > 0 {
		section("\nWORKER POOLS", "NAME\tNODES\tPER NODE\tFAILURE DOMAINS\tCPU MODEL\tNETWORKS\tSTORAGE\tDEFAULT")
		all := func(l []string) string {
			if len(l) == 0 {
				return "all"
			}
			return strings.Join(l, ",")
		}
		for _, p := range v.Pools {
			fmt.Fprintf(tw, "%s\t%d\t%s CPU, %s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.Nodes, p.CPU, p.Memory, p.Domains, dash(p.CPUModel), all(p.Networks), all(p.Storage), yes(p.Default))
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "\nSUPPORTED PLATFORM VERSIONS\n%s\n", strings.Join(v.Platforms, ", "))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
