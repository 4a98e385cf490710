// Climbing out of the input root.
import '../../secret.libsonnet'
