// The ci tenant and its 40 build agents, from one template.
local virtc = import 'virtc.libsonnet';

[
  virtc.tenant('ci', { access: { admin: ['ci-admins'], edit: ['ci-bots'], view: ['developers'] } }),
] + virtc.fleet('ci', 'agent', 40, {
  size: 'u1.large',
  image: 'rhel9',
  disks: [{ name: 'cache', size: '100Gi' }],
  migration: 'Never',
  backup: 'none',
}, labels={ app: 'build-agent' })
