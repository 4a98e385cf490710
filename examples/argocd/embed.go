// Package argocd holds the Argo CD wiring of the example, embedded so that
// `virtc init` writes the same plugin and argocd-cm patch into a new
// repository: one copy of each file, which the e2e tests (TestCMPContract)
// and make e2e-argocd run. The repo-server patch is not embedded: it holds
// the digest of virtc's own image, which would then change with every pin
// (make image-pin) and never match; init's template of it
// (internal/initrepo/templates/argocd) is held to it by golden/init_test.go.
package argocd

import "embed"

// Wiring are the files a new repository takes unchanged: the config
// management plugin and the health checks and ignore rules of argocd-cm.
//
//go:embed plugin.yaml argocd-cm-patch.yaml
var Wiring embed.FS
