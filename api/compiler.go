package api

// Compiler configures virtc itself where no command line exists: as the
// functionConfig of the KRM function under kustomize or kpt, and as the
// virtc.yaml marker file of the Argo CD plugin. `virtc build` reads no
// Compiler as an input, so one may sit beside the intents it configures;
// the commands that read a directory DIR (build, validate, diff, catalog,
// report, facts, restore-plan), and the KRM function for the directories
// it builds, take the catalogDirs and appProjects (relative to DIR) and
// noDefaultCatalog of DIR's virtc.yaml, so a directory compiles with the
// catalog its Argo CD Application uses, from anywhere.
type Compiler struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta   `json:"metadata,omitempty"`
	Spec     CompilerSpec `json:"spec,omitempty"`
}

// CompilerSpec holds the options `virtc build` takes as flags. Paths are
// read relative to the function's working directory: kustomize sets it to
// the directory of the kustomization that declares the function.
type CompilerSpec struct {
	// Paths are files or directories of intents and catalog entries to read,
	// like the PATH arguments of `virtc build`. A generator names its inputs
	// here; a transformer may leave it empty and get its inputs as items.
	Paths []string `json:"paths,omitempty"`
	// CatalogDirs are catalog files or directories to read besides the
	// inputs, like `virtc build --catalog`.
	CatalogDirs []string `json:"catalogDirs,omitempty"`
	// NoDefaultCatalog leaves the embedded default catalog out, like
	// `virtc build --no-default-catalog`.
	NoDefaultCatalog bool `json:"noDefaultCatalog,omitempty"`
	// Scope limits the output to some scopes' objects, like `virtc build
	// --scope` (the default: all). Everything is still read and checked.
	Scope string `json:"scope,omitempty" pattern:"^(all|platform|tenants|vms)(,(all|platform|tenants|vms))*$" hint:"all, platform, tenants or vms, or several of them separated by commas (platform,tenants)"`
	// Tenant limits the output to one tenant's objects, like `virtc build
	// --tenant`: those in its namespace, its Namespace, its backup
	// Schedules and Backups (empty: all). Everything is still read and
	// checked.
	Tenant string `json:"tenant,omitempty"`
	// ExtStr are Jsonnet external variables, like `virtc build --ext-str
	// key=value`.
	ExtStr map[string]string `json:"extStr,omitempty"`
	// WarningsConfigMap is NAMESPACE/NAME of a ConfigMap listing the
	// build's warnings, written with the generated objects (empty when
	// there are none), so that Argo CD shows them among the Application's
	// resources; like `virtc build --warnings-configmap`. Empty: none.
	WarningsConfigMap string `json:"warningsConfigMap,omitempty"`
	// AppProjects are files or directories of the Argo CD AppProjects the
	// tenants' Applications run in, like `virtc build --app-projects`
	// (in virtc.yaml, relative to its directory: the layout of `virtc
	// init` names ../../argocd/projects.yaml). Named, they are checked
	// against the Tenants: each Tenant needs the project
	// virtc-tenant-NAME (the ApplicationSet `virtc init` writes names
	// it), whose destinations are the tenant's namespace only, which
	// permits no cluster-scoped kind, and which permits every kind the
	// tenant's `--scope vms` build prints, as Argo CD judges them;
	// otherwise the build is refused, naming the Tenant. Empty: no check.
	AppProjects []string `json:"appProjects,omitempty"`
}
