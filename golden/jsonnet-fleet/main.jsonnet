// A tenant and a fleet of build agents, with a local library for the
// agents' shape.
local virtc = import 'virtc.libsonnet';
local agents = import 'lib/agents.libsonnet';

[
  virtc.tenant('builds', {
    access: { admin: ['build-admins'], edit: ['build-bots'] },
    quota: { cpu: 32, memory: '128Gi', storage: '2Ti', vms: 12 },
  }),
] + virtc.fleet('builds', 'agent', 5, agents.template('u1.large'), labels={ app: 'agent' })
  + [virtc.vm('builds', 'cache', { size: 'u1.xlarge', image: 'rhel9', disks: [{ name: 'blobs', size: '500Gi' }] })]
