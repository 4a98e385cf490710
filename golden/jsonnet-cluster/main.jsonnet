// One source for several clusters: the cluster and the tier come from
// --ext-str.
local virtc = import 'virtc.libsonnet';
local cluster = std.extVar('cluster');
local tier = std.extVar('tier');
local sizes = { gold: 'u1.xlarge', silver: 'u1.large' };

[
  virtc.tenant('shop-' + cluster),
  virtc.vm('shop-' + cluster, 'web', {
    size: sizes[tier],
    image: 'rhel9',
    backup: if tier == 'gold' then 'daily' else 'none',
  }, labels={ cluster: cluster, tier: tier }),
]
