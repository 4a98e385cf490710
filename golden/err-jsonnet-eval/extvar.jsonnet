local virtc = import 'virtc.libsonnet';

// Run without --ext-str cluster=...
virtc.tenant('shop-' + std.extVar('cluster'))
