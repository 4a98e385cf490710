local virtc = import 'virtc.libsonnet';

virtc.fleet('ci', 'agent', 0, { size: 'u1.small', image: 'rhel9' })
