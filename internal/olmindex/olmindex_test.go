package olmindex

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/virtc/virtc/internal/versions"
)

func csv(v versions.Version) string { return "kubevirt-hyperconverged-operator.v" + v.String() }

// A catalog in the form `opm render` prints (a stream of JSON objects,
// operator-registry v1.65.0 alpha/declcfg/write.go WriteJSON), with two
// channels of one package: stable, whose head is a z-stream past virtc's
// table, and candidate, one minor ahead; and a second package.
const rendered = `{"schema":"olm.package","name":"kubevirt-hyperconverged","defaultChannel":"stable"}
{"schema":"olm.channel","package":"kubevirt-hyperconverged","name":"stable","entries":[
 {"name":"kubevirt-hyperconverged-operator.v4.21.8"},
 {"name":"kubevirt-hyperconverged-operator.v4.22.0","replaces":"kubevirt-hyperconverged-operator.v4.21.8"},
 {"name":"kubevirt-hyperconverged-operator.v4.22.6","replaces":"kubevirt-hyperconverged-operator.v4.22.0","skipRange":">=4.22.0 <4.22.6"},
 {"name":"kubevirt-hyperconverged-operator.v4.22.7","replaces":"kubevirt-hyperconverged-operator.v4.22.6","skipRange":">=4.22.0 <4.22.7"}]}
{"schema":"olm.channel","package":"kubevirt-hyperconverged","name":"candidate","entries":[
 {"name":"kubevirt-hyperconverged-operator.v4.22.7"},
 {"name":"kubevirt-hyperconverged-operator.v4.23.0","replaces":"kubevirt-hyperconverged-operator.v4.22.7","skipRange":">=4.22.0 <4.23.0"}]}
{"schema":"olm.bundle","name":"kubevirt-hyperconverged-operator.v4.21.8","package":"kubevirt-hyperconverged","image":"registry.redhat.io/container-native-virtualization/hco-bundle-registry@sha256:01","properties":[{"type":"olm.package","value":{"packageName":"kubevirt-hyperconverged","version":"4.21.8"}}]}
{"schema":"olm.bundle","name":"kubevirt-hyperconverged-operator.v4.22.0","package":"kubevirt-hyperconverged","properties":[{"type":"olm.gvk","value":{"group":"hco.kubevirt.io","kind":"HyperConverged","version":"v1beta1"}},{"type":"olm.package","value":{"packageName":"kubevirt-hyperconverged","version":"4.22.0"}}]}
{"schema":"olm.bundle","name":"kubevirt-hyperconverged-operator.v4.22.6","package":"kubevirt-hyperconverged","properties":[{"type":"olm.package","value":{"packageName":"kubevirt-hyperconverged","version":"4.22.6"}}]}
{"schema":"olm.bundle","name":"kubevirt-hyperconverged-operator.v4.22.7","package":"kubevirt-hyperconverged","properties":[{"type":"olm.package","value":{"packageName":"kubevirt-hyperconverged","version":"4.22.7"}}]}
{"schema":"olm.bundle","name":"kubevirt-hyperconverged-operator.v4.23.0","package":"kubevirt-hyperconverged","properties":[{"type":"olm.package","value":{"packageName":"kubevirt-hyperconverged","version":"4.23.0"}}]}
{"schema":"olm.deprecations","package":"kubevirt-hyperconverged","entries":[]}
{"schema":"olm.package","name":"redhat-oadp-operator","defaultChannel":"stable"}
{"schema":"olm.channel","package":"redhat-oadp-operator","name":"stable","entries":[{"name":"oadp-operator.v1.6.0","skipRange":">=0.0.0 <1.6.0"}]}
{"schema":"olm.bundle","name":"oadp-operator.v1.6.0","package":"redhat-oadp-operator","properties":[{"type":"olm.package","value":{"packageName":"redhat-oadp-operator","version":"1.6.0"}}]}
`

func v(s string) versions.Version {
	x, err := versions.Parse(s)
	if err != nil {
		panic(err)
	}
	return x
}

func steps(r *versions.Route) string {
	var out []string
	for _, s := range r.Versions() {
		out = append(out, s.String())
	}
	return strings.Join(out, " ")
}

// Each channel is its own graph: the Subscription's spec.channel picks
// one, and an empty one is the package's default (stable).
func TestReadFBCTwoChannels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.json")
	if err := os.WriteFile(path, []byte(rendered), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := ReadFBC(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ix.Source, path+" (sha256:") {
		t.Errorf("source %q", ix.Source)
	}
	stable, err := ix.Channel("kubevirt-hyperconverged", "", csv)
	if err != nil {
		t.Fatal(err)
	}
	if stable.Name != "stable" || stable.Head() != v("4.22.7") {
		t.Errorf("default channel %s head %s", stable.Name, stable.Head())
	}
	if r := stable.Route(v("4.21.8"), v("4.22.6")); r.Reached || steps(r) != "4.22.0" || r.Past == nil || r.Past.Version != v("4.22.7") {
		t.Errorf("stable 4.21.8 → 4.22.6: %s", r.Explain())
	}
	candidate, err := ix.Channel("kubevirt-hyperconverged", "candidate", csv)
	if err != nil {
		t.Fatal(err)
	}
	if r := candidate.Route(v("4.22.0"), v("4.23.0")); !r.Reached || steps(r) != "4.23.0" {
		t.Errorf("candidate 4.22.0 → 4.23.0: %s", r.Explain())
	}
	if r := stable.Route(v("4.22.7"), v("4.23.0")); r.Reached {
		t.Errorf("stable has no 4.23: %s", r.Explain())
	}
	if _, err := ix.Channel("kubevirt-hyperconverged", "fast", csv); err == nil || !strings.Contains(err.Error(), `no channel "fast" (channels: candidate, stable)`) {
		t.Errorf("unknown channel: %v", err)
	}
	if _, err := ix.Channel("nope", "stable", csv); err == nil || !strings.Contains(err.Error(), "packages: kubevirt-hyperconverged, redhat-oadp-operator") {
		t.Errorf("unknown package: %v", err)
	}
}

// A catalog directory of YAML files reads to the same graph, whatever the
// split; a change of one byte changes the digest in its source.
func TestReadFBCDirectory(t *testing.T) {
	dir := t.TempDir()
	var docs []string
	for _, line := range strings.Split(strings.TrimSpace(rendered), "\n{") {
		docs = append(docs, "{"+strings.TrimPrefix(line, "{"))
	}
	// The multi-line channel entries are one JSON document each: join
	// the stream back into documents by schema.
	joined := strings.Join(docs, "\n")
	if err := os.MkdirAll(filepath.Join(dir, "kubevirt-hyperconverged"), 0o755); err != nil {
		t.Fatal(err)
	}
	yamlDocs := strings.ReplaceAll(joined, "\n{\"schema\"", "\n---\n{\"schema\"")
	if err := os.WriteFile(filepath.Join(dir, "kubevirt-hyperconverged", "catalog.yaml"), []byte(yamlDocs), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a catalog file"), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := ReadFBC(dir)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := ix.Channel("kubevirt-hyperconverged", "stable", csv)
	if err != nil || ch.Head() != v("4.22.7") || len(ch.Bundles) != 4 {
		t.Fatalf("channel %+v, %v", ch, err)
	}
	first := ix.Source
	if err := os.WriteFile(filepath.Join(dir, "kubevirt-hyperconverged", "catalog.yaml"), []byte(yamlDocs+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ix2, err := ReadFBC(dir); err != nil || ix2.Source == first {
		t.Errorf("source unchanged after an edit: %v", err)
	}
}

// What operator-registry refuses (alpha/declcfg/declcfg_to_model.go), and
// what virtc cannot model, are errors naming the bundle.
func TestReadFBCErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"entry without bundle", `{"schema":"olm.package","name":"p"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}`, `entry "p.v1.0.0" has no olm.bundle`},
		{"two olm.package properties", `{"schema":"olm.package","name":"p"}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},{"type":"olm.package","value":{"packageName":"p","version":"1.0.1"}}]}`, `must have exactly 1 "olm.package" property, found 2`},
		{"pre-release", `{"schema":"olm.package","name":"p"}
{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0-rc1"}]}
{"schema":"olm.bundle","name":"p.v1.0.0-rc1","package":"p","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0-rc1"}}]}`, "virtc models released x.y.z versions only"},
		{"channel of no package", `{"schema":"olm.channel","package":"q","name":"stable","entries":[]}`, `names package "q", which has no olm.package`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.json")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadFBC(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// bundleMsg encodes an api.Bundle message (operator-registry v1.65.0
// pkg/api/registry.proto) with the fields an image-based catalog sends
// from ListBundles, and a property, which the reader skips.
func bundleMsg(e Entry) []byte {
	var b []byte
	str := func(num protowire.Number, s string) {
		if s != "" {
			b = protowire.AppendTag(b, num, protowire.BytesType)
			b = protowire.AppendString(b, s)
		}
	}
	str(1, e.Name)
	str(2, e.Package)
	str(3, e.Channel)
	str(6, "registry.redhat.io/bundle@sha256:00")
	str(9, e.Version)
	str(10, e.SkipRange)
	var prop []byte
	prop = protowire.AppendTag(prop, 1, protowire.BytesType)
	prop = protowire.AppendString(prop, "olm.package")
	b = protowire.AppendTag(b, 12, protowire.BytesType)
	b = protowire.AppendBytes(b, prop)
	str(13, e.Replaces)
	for _, s := range e.Skips {
		str(14, s)
	}
	return b
}

// ListBundles speaks the registry's streaming call and keeps the graph of
// the packages asked for. The real `opm serve` is read the same way in
// test/internal/olm (TestOLMInstallsAndUpgradesOnThePin).
func TestListBundlesOverGRPC(t *testing.T) {
	entries := []Entry{
		{Package: "kubevirt-hyperconverged", Channel: "stable", Name: csv(v("4.22.0")), Version: "4.22.0"},
		{Package: "kubevirt-hyperconverged", Channel: "stable", Name: csv(v("4.22.7")), Version: "4.22.7", Replaces: csv(v("4.22.0")), Skips: []string{csv(v("4.22.6"))}, SkipRange: ">=4.22.0 <4.22.7"},
		{Package: "other", Channel: "stable", Name: "other.v1.0.0", Version: "not-a-version"},
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(stream)
		if method != "/api.Registry/ListBundles" {
			t.Errorf("method %s", method)
		}
		var req rawMsg
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		for _, e := range entries {
			m := rawMsg(bundleMsg(e))
			if err := stream.SendMsg(&m); err != nil {
				return err
			}
		}
		return nil
	}))
	go srv.Serve(lis)
	defer srv.Stop()
	ix, err := ListBundles(context.Background(), lis.Addr().String(), "kubevirt-hyperconverged")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := ix.Channel("kubevirt-hyperconverged", "stable", csv)
	if err != nil {
		t.Fatal(err)
	}
	b := ch.Bundles[0]
	if ch.Head() != v("4.22.7") || b.Replaces != csv(v("4.22.0")) || b.SkipRange != ">=4.22.0 <4.22.7" || strings.Join(b.Skips, ",") != csv(v("4.22.6")) || len(ix.Packages) != 1 {
		t.Errorf("read %+v", ch)
	}
	// Everything, and the unparsable version of the other package is an
	// error naming it.
	if _, err := ListBundles(context.Background(), lis.Addr().String()); err == nil || !strings.Contains(err.Error(), "other.v1.0.0") {
		t.Errorf("all packages: %v", err)
	}
	// Nobody listening: an error, and no index.
	lis2, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := lis2.Addr().String()
	lis2.Close()
	if ix, err := ListBundles(context.Background(), addr); err == nil || ix != nil {
		t.Errorf("closed port: %v %v", ix, err)
	}
}

// WriteGraph keeps what OLM's resolver reads and nothing else: the graph
// it writes reads back to the same channels, of the packages asked for
// only, in the same bytes whatever the input's order.
func TestWriteGraphRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "render.json")
	if err := os.WriteFile(in, []byte(rendered), 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := WriteGraph(&out, in, nil, []string{"kubevirt-hyperconverged"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "olm.gvk") || strings.Contains(out.String(), "redhat-oadp-operator") || strings.Contains(out.String(), "olm.deprecations") {
		t.Errorf("kept more than the graph:\n%s", out.String())
	}
	graph := filepath.Join(dir, "graph.yaml")
	if err := os.WriteFile(graph, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := ReadFBC(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadFBC(graph)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"stable", "candidate"} {
		x, err1 := a.Channel("kubevirt-hyperconverged", c, csv)
		y, err2 := b.Channel("kubevirt-hyperconverged", c, csv)
		if err1 != nil || err2 != nil || names(x.Bundles) != names(y.Bundles) || fmt.Sprint(x.Bundles) != fmt.Sprint(y.Bundles) {
			t.Errorf("channel %s: %v %v\n%v\n%v", c, err1, err2, x, y)
		}
	}
	// The same documents in another order: the same graph, byte for byte
	// (the header names the input and its digest).
	lines := strings.Split(strings.TrimSpace(rendered), "\n{")
	slices.Reverse(lines)
	var shuffled []string
	for _, l := range lines {
		shuffled = append(shuffled, "{"+strings.TrimPrefix(l, "{"))
	}
	var again strings.Builder
	if err := WriteGraph(&again, "render.json", strings.NewReader(strings.Join(shuffled, "\n")), []string{"kubevirt-hyperconverged"}); err != nil {
		t.Fatal(err)
	}
	body := func(s string) string { _, b, _ := strings.Cut(s, "catalog.\n"); return b }
	if body(again.String()) != body(out.String()) {
		t.Errorf("order changed the output:\n%s\n---\n%s", again.String(), out.String())
	}
	if err := WriteGraph(io.Discard, in, nil, []string{"nope"}); err == nil {
		t.Error("a catalog without the package wrote a graph")
	}
}

func names(bs []versions.Bundle) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return strings.Join(out, " ")
}
