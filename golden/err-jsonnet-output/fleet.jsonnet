// Jsonnet output goes through the same checks as YAML.
local virtc = import 'virtc.libsonnet';

[
  virtc.tenant('ci'),
  'not an object',
  virtc.vm('ci', 'Agent_1', { size: 'u1.small', image: 'rhel9', cpu: 2 }),
  virtc.vm('ci', 'agent-2', { size: 2, image: 'rhel9', migration: 'Sometimes' }),
]
