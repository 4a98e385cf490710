// Package model holds what more than one stage knows of the resolved
// model beside the model itself: the names of the objects virtc writes,
// the labels and annotations it sets and the label sets that select them,
// the namespaces it installs into, and the facts derived from a VM that
// placement, the rules and the renderers all read (its eviction strategy,
// architecture, guest health, cloud-init data, a pool's tolerations, a
// tenant's network attachments). Rules and placement sit below render and
// read these here, so that render is the only stage that builds objects.
package model
