// Package argocd holds the Argo CD wiring of the example, embedded so that
// `virtc init` writes the same plugin, repo-server patch and argocd-cm
// patch into a new repository: one copy of each file, which the e2e tests
// (TestCMPContract) and make e2e-argocd run.
package argocd

import "embed"

// Wiring are the files a new repository takes unchanged: the config
// management plugin, the sidecar patch of argocd-repo-server and the
// health checks and ignore rules of argocd-cm.
//
//go:embed plugin.yaml repo-server-patch.yaml argocd-cm-patch.yaml
var Wiring embed.FS
