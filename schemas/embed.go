// Package schemas holds the generated JSON Schemas of the virtc kinds
// (make generate writes them; do not edit): one per kind, and virtc.json for
// any virtc object. `virtc schema` prints them.
package schemas

import "embed"

// Files are the schema files.
//
//go:embed *.json
var Files embed.FS
