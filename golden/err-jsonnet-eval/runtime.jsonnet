local virtc = import 'virtc.libsonnet';
local count = 3;

if count % 2 == 1 then error 'agents come in pairs, not %d' % count
else virtc.fleet('ci', 'agent', count, { size: 'u1.small', image: 'rhel9' })
