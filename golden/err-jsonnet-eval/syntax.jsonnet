{
  apiVersion: 'virtc.dev/v1alpha1',
  kind: 'Tenant'
  metadata: { name: 'a' },
}
