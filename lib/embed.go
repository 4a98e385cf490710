// Package lib holds the Jsonnet library shipped in the virtc binary:
// virtc.libsonnet, which every Jsonnet input imports by that name, with
// helpers for the common shapes of intents and catalogs.
package lib

import _ "embed"

// Name is the import path of the library in Jsonnet files.
const Name = "virtc.libsonnet"

// Virtc is the text of virtc.libsonnet.
//
//go:embed virtc.libsonnet
var Virtc string
