// The u1 (universal) series of KubeVirt's common-instancetypes, as OpenShift
// Virtualization installs them: virtc references these, it does not emit
// them. Below medium the shapes are hand-picked; from large up the series is
// a family: each step doubles the vCPUs, at 4Gi of memory per vCPU.
local virtc = import 'virtc.libsonnet';

local small = [
  { name: 'nano', cpu: 1, memory: '512Mi' },
  { name: 'micro', cpu: 1, memory: '1Gi' },
  { name: 'small', cpu: 1, memory: '2Gi' },
  { name: 'medium', cpu: 1, memory: '4Gi' },
  { name: '2xmedium', cpu: 2, memory: '4Gi' },
];

// large (2 vCPUs), xlarge (4), then 2xlarge, 4xlarge, 8xlarge.
local family = [
  { name: 'large', cpu: 2 },
  { name: 'xlarge', cpu: 4 },
] + [
  { name: '%dxlarge' % m, cpu: 4 * m }
  for m in [2, 4, 8]
];

virtc.sizeSeries('u1', small + [s { memory: '%dGi' % (4 * s.cpu) } for s in family], builtin=true)
