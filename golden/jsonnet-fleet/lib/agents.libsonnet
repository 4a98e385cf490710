{
  // A build agent: a scratch disk (60Gi on odd agents, 50Gi on even ones),
  // never migrated.
  template(size):: function(i) {
    size: size,
    image: 'rhel9',
    disks: [{ name: 'scratch', size: '%dGi' % (50 + 10 * (i % 2)) }],
    migration: 'Never',
  },
}
