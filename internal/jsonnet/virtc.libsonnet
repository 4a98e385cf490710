// virtc.libsonnet: helpers for virtc intents and catalogs, embedded in the
// virtc binary and imported by that name:
//
//   local virtc = import 'virtc.libsonnet';
//
// Every helper returns plain virtc.dev/v1alpha1 objects; the compiler checks
// them exactly as it checks YAML.
{
  apiVersion:: 'virtc.dev/v1alpha1',

  // Zero-padded decimal: pad(7, 2) is '07'.
  pad(n, width)::
    local s = std.toString(n);
    std.repeat('0', std.max(0, width - std.length(s))) + s,

  // A Tenant: the namespace name and its spec (access, quota, backup).
  tenant(name, spec={}, labels={})::
    {
      apiVersion: $.apiVersion,
      kind: 'Tenant',
      metadata: { name: name } + (if labels == {} then {} else { labels: labels }),
      spec: spec,
    },

  // A VM of a tenant: its spec (size, image, disks, ...) as in YAML.
  vm(namespace, name, spec, labels={}, annotations={})::
    {
      apiVersion: $.apiVersion,
      kind: 'VM',
      metadata: { name: name, namespace: namespace }
                + (if labels == {} then {} else { labels: labels })
                + (if annotations == {} then {} else { annotations: annotations }),
      spec: spec,
    },

  // count VMs named <prefix>-01 ... <prefix>-<count> (the numbers padded to
  // the width of count, at least 2 digits) from one template. The template
  // is a VM spec, or a function of the VM's number (from 1) that returns one.
  fleet(namespace, prefix, count, template, labels={}, width=0)::
    assert std.isNumber(count) && count >= 1 && count == std.floor(count) : 'fleet: count must be a whole number of at least 1';
    local digits = std.max(2, std.max(width, std.length(std.toString(count))));
    [
      $.vm(namespace,
           prefix + '-' + $.pad(i, digits),
           if std.isFunction(template) then template(i) else template,
           labels)
      for i in std.range(1, count)
    ],

  // A Size: an instance type of cpu vCPUs and memory (a quantity string).
  // builtin marks sizes OpenShift Virtualization already installs.
  size(name, cpu, memory, builtin=false)::
    {
      apiVersion: $.apiVersion,
      kind: 'Size',
      metadata: { name: name },
      spec: { cpu: cpu, memory: memory } + (if builtin then { builtin: true } else {}),
    },

  // A size series: Sizes named <series>.<shape name>, in the order given.
  // Each shape is { name, cpu, memory }.
  sizeSeries(series, shapes, builtin=false)::
    [$.size(series + '.' + s.name, s.cpu, s.memory, builtin) for s in shapes],
}
