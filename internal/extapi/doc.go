// Package extapi declares the Go types of the APIs virtc emits but cannot
// import (HyperConverged, OLM, network attachments, OVN-Kubernetes
// user-defined networks, OADP and Velero): their modules are not served or
// would pull in hundreds of others. Each type holds exactly the fields
// virtc writes, with the upstream JSON names; tests check the output
// against the upstream schemas, so a misnamed field fails there.
package extapi
