// Package catalog holds virtc's default catalog as data: the sizes, images,
// network and storage profiles and backup policies a cluster has with no
// configuration. A platform team overrides or adds entries from its own
// repository with files of the same kinds.
package catalog

import "embed"

// Files are the default catalog's documents: YAML, and Jsonnet for the
// entries that are families (the size series).
//
//go:embed *.yaml *.jsonnet
var Files embed.FS

// Versions holds the table of supported platform versions.
//
//go:embed versions/versions.yaml
var Versions []byte
