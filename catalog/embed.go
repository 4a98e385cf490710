// Package catalog holds virtc's default catalog as data: the sizes, images,
// network and storage profiles and backup policies a cluster has with no
// configuration. A platform team overrides or adds entries from its own
// repository with files of the same kinds.
package catalog

import "embed"

// Files are the default catalog's documents. common-instancetypes.yaml is
// generated (make generate, cmd/instancetypegen) from the bundle KubeVirt
// deploys; the others are written by hand. A Jsonnet file here would be
// evaluated like a user's.
//
//go:embed *.yaml
var Files embed.FS

// Versions holds the table of supported platform versions.
//
//go:embed versions/versions.yaml
var Versions []byte

// Alerting holds the default thresholds and severities of the alerts virtc
// compiles (an api.Monitoring without enabled): per tier, and for the
// platform. A Platform's spec.monitoring overrides them.
//
//go:embed monitoring/alerting.yaml
var Alerting []byte
