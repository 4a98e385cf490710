// A symlink inside the root that leads out of it.
import 'lib/outside.libsonnet'
