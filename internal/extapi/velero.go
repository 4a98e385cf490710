package extapi

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// DataProtectionApplication is oadp.openshift.io/v1alpha1
// DataProtectionApplication.
type DataProtectionApplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              DataProtectionApplicationSpec `json:"spec"`
}

// DataProtectionApplicationSpec is the part virtc sets.
type DataProtectionApplicationSpec struct {
	Configuration   ApplicationConfig `json:"configuration"`
	BackupLocations []BackupLocation  `json:"backupLocations,omitempty"`
}

// ApplicationConfig configures Velero and the node agent.
type ApplicationConfig struct {
	Velero    *VeleroConfig    `json:"velero,omitempty"`
	NodeAgent *NodeAgentConfig `json:"nodeAgent,omitempty"`
}

// VeleroConfig lists Velero's plugins.
type VeleroConfig struct {
	DefaultPlugins []string `json:"defaultPlugins,omitempty"`
}

// NodeAgentConfig enables the node agent (file system backup and data mover).
type NodeAgentConfig struct {
	Enable       *bool  `json:"enable,omitempty"`
	UploaderType string `json:"uploaderType"`
}

// BackupLocation is one backup storage location of the DPA.
type BackupLocation struct {
	Name   string              `json:"name,omitempty"`
	Velero *BackupLocationSpec `json:"velero,omitempty"`
}

// BackupLocationSpec is Velero's BackupStorageLocation spec.
type BackupLocationSpec struct {
	Provider      string             `json:"provider"`
	Default       bool               `json:"default,omitempty"`
	ObjectStorage ObjectStorage      `json:"objectStorage"`
	Credential    *SecretKeySelector `json:"credential,omitempty"`
	Config        map[string]string  `json:"config,omitempty"`
}

// ObjectStorage is a bucket and prefix.
type ObjectStorage struct {
	Bucket string `json:"bucket"`
	Prefix string `json:"prefix,omitempty"`
}

// SecretKeySelector names a key of a Secret.
type SecretKeySelector struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Schedule is velero.io/v1 Schedule.
type Schedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ScheduleSpec `json:"spec"`
}

// ScheduleSpec is a cron schedule with a backup template.
type ScheduleSpec struct {
	Schedule                   string     `json:"schedule"`
	SkipImmediately            *bool      `json:"skipImmediately,omitempty"`
	UseOwnerReferencesInBackup *bool      `json:"useOwnerReferencesInBackup,omitempty"`
	Template                   BackupSpec `json:"template"`
}

// Backup is velero.io/v1 Backup.
type Backup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              BackupSpec `json:"spec"`
}

// BackupSpec is what a backup includes and how.
type BackupSpec struct {
	// Metadata is what a Schedule's template gives each Backup it creates
	// (velero.io/v1 Metadata); a Backup's own spec leaves it empty.
	Metadata                 *BackupMetadata       `json:"metadata,omitempty"`
	IncludedNamespaces       []string              `json:"includedNamespaces,omitempty"`
	LabelSelector            *metav1.LabelSelector `json:"labelSelector,omitempty"`
	TTL                      string                `json:"ttl,omitempty"`
	StorageLocation          string                `json:"storageLocation,omitempty"`
	SnapshotVolumes          *bool                 `json:"snapshotVolumes,omitempty"`
	SnapshotMoveData         *bool                 `json:"snapshotMoveData,omitempty"`
	DefaultVolumesToFsBackup *bool                 `json:"defaultVolumesToFsBackup,omitempty"`
}

// BackupMetadata is velero.io/v1 Metadata: the labels of the Backups a
// Schedule creates.
type BackupMetadata struct {
	Labels map[string]string `json:"labels,omitempty"`
}

// Restore is velero.io/v1 Restore.
type Restore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              RestoreSpec `json:"spec"`
}

// RestoreSpec says what to restore from which backup.
type RestoreSpec struct {
	BackupName             string                `json:"backupName,omitempty"`
	ScheduleName           string                `json:"scheduleName,omitempty"`
	IncludedNamespaces     []string              `json:"includedNamespaces,omitempty"`
	LabelSelector          *metav1.LabelSelector `json:"labelSelector,omitempty"`
	NamespaceMapping       map[string]string     `json:"namespaceMapping,omitempty"`
	RestorePVs             *bool                 `json:"restorePVs,omitempty"`
	ExistingResourcePolicy string                `json:"existingResourcePolicy,omitempty"`
}
