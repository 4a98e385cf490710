package source

import "testing"

// SameAsV3 checks the fast parser against yaml.v3 for the external tests.
func SameAsV3(t *testing.T, name string, data []byte) bool { return sameAsV3(t, name, data) }
