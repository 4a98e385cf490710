package olmindex

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"
)

// ListBundles reads the graph of packages (all when none is named) from a
// CatalogSource's registry at addr (host:port, the CatalogSource's
// spec.address or status.registryService: operator-framework/api v0.42.0
// pkg/operators/v1alpha1/catalogsource_types.go, CatalogSource.Address),
// with the registry's ListBundles call: the call OLM's resolver reads its
// catalogs with (operator-lifecycle-manager v0.42.0
// pkg/controller/registry/resolver/source_registry.go), without TLS as OLM
// dials it. It streams one message per bundle and channel; an image-based
// catalog leaves out the CSV and manifests (operator-registry v1.65.0
// pkg/cache/cache.go SendBundles: CsvJson and Object are dropped when the
// bundle has a bundlePath), and this keeps only the graph of the packages
// asked for, so a whole redhat-operators index fits the approver's memory.
func ListBundles(ctx context.Context, addr string, packages ...string) (*Index, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	desc := &grpc.StreamDesc{StreamName: "ListBundles", ServerStreams: true}
	stream, err := conn.NewStream(ctx, desc, "/api.Registry/ListBundles", grpc.ForceCodec(rawCodec{}))
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", addr, err)
	}
	req := rawMsg{} // ListBundlesRequest has no fields.
	if err := stream.SendMsg(&req); err != nil {
		return nil, fmt.Errorf("registry %s: %w", addr, err)
	}
	if err := stream.CloseSend(); err != nil {
		return nil, fmt.Errorf("registry %s: %w", addr, err)
	}
	want := map[string]bool{}
	for _, p := range packages {
		want[p] = true
	}
	ix := newIndex("the registry of CatalogSource at " + addr)
	var errs []error
	for {
		var msg rawMsg
		if err := stream.RecvMsg(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("registry %s: ListBundles: %w", addr, err)
		}
		e, err := decodeBundle(msg)
		if err != nil {
			return nil, fmt.Errorf("registry %s: ListBundles: %v", addr, err)
		}
		if len(want) > 0 && !want[e.Package] {
			continue
		}
		if err := ix.add(e); err != nil {
			errs = append(errs, err)
		}
	}
	return ix, errors.Join(errs...)
}

// decodeBundle reads the graph fields of an api.Bundle message
// (operator-registry v1.65.0 pkg/api/registry.proto: csvName = 1,
// packageName = 2, channelName = 3, version = 9, skipRange = 10,
// replaces = 13, skips = 14), skipping the others.
func decodeBundle(b []byte) (Entry, error) {
	var e Entry
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return e, protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return e, protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return e, protowire.ParseError(n)
		}
		b = b[n:]
		switch num {
		case 1:
			e.Name = string(v)
		case 2:
			e.Package = string(v)
		case 3:
			e.Channel = string(v)
		case 9:
			e.Version = string(v)
		case 10:
			e.SkipRange = string(v)
		case 13:
			e.Replaces = string(v)
		case 14:
			e.Skips = append(e.Skips, string(v))
		}
	}
	if e.Name == "" || e.Package == "" {
		return e, fmt.Errorf("a Bundle message without csvName or packageName")
	}
	return e, nil
}

// rawMsg is a message's wire bytes: the approver needs a handful of
// fields of one message, not operator-registry's generated API and its
// dependencies.
type rawMsg []byte

type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(*rawMsg)
	if !ok {
		return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
	}
	return *m, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*rawMsg)
	if !ok {
		return fmt.Errorf("rawCodec: cannot unmarshal into %T", v)
	}
	*m = append((*m)[:0], data...)
	return nil
}
