// Imports inside the root resolve.
local inside = import 'lib/inside.libsonnet';
(import 'virtc.libsonnet').tenant(inside.name)
