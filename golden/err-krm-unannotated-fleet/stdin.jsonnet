// The ResourceList kustomize gives the KRM function in transformer form
// (`transformers: [compiler.yaml]`, `buildMetadata: [originAnnotations]`)
// for a fleet of 10 tenants with 49 VMs each, 500 intents listed as
// resources, none marked config.kubernetes.io/local-config.
local pad(n) = if n < 10 then '0' + n else '' + n;
local origin(path) = { 'config.kubernetes.io/origin': 'path: ' + path + '\n' };
local tenant(t) = {
  apiVersion: 'virtc.dev/v1alpha1',
  kind: 'Tenant',
  metadata: { name: 'team-' + pad(t), annotations: origin('tenants/team-' + pad(t) + '.yaml') },
};
local vm(t, v) = {
  apiVersion: 'virtc.dev/v1alpha1',
  kind: 'VM',
  metadata: {
    name: 'vm-' + pad(v),
    namespace: 'team-' + pad(t),
    annotations: origin('vms/team-' + pad(t) + '/vm-' + pad(v) + '.yaml'),
  },
  spec: { size: 'u1.small', image: 'fedora', backup: 'none' },
};
{
  apiVersion: 'config.kubernetes.io/v1',
  kind: 'ResourceList',
  functionConfig: {
    apiVersion: 'virtc.dev/v1alpha1',
    kind: 'Compiler',
    metadata: { name: 'virtc', annotations: { 'config.kubernetes.io/function': 'exec:\n  path: virtc\n' } },
    spec: {},
  },
  items: [tenant(t) for t in std.range(1, 10)] + [vm(t, v) for t in std.range(1, 10) for v in std.range(1, 49)],
}
