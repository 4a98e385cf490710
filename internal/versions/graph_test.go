package versions

import (
	"slices"
	"strings"
	"testing"
)

// b is a bundle of package "p" named p.v<version>.
func b(version, replaces string, skips []string, skipRange string) Bundle {
	v, err := Parse(version)
	if err != nil {
		panic(err)
	}
	name := func(s string) string {
		if s == "" {
			return ""
		}
		return "p.v" + s
	}
	var sk []string
	for _, s := range skips {
		sk = append(sk, name(s))
	}
	return NewBundle(name(version), v, name(replaces), sk, skipRange)
}

func pCSV(v Version) string { return "p.v" + v.String() }

func names(bs []Bundle) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return strings.Join(out, " ")
}

// The cases of operator-lifecycle-manager v0.42.0
// pkg/controller/registry/resolver/resolver_test.go TestSortChannel, on
// SortChannel (a port of resolver.go sortChannel), with the same results
// and the same errors.
func TestSortChannelAsOLM(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      []Bundle
		chain   string
		others  string
		wantErr string
	}{
		{name: "wrinkle-free", in: []Bundle{b("1.0.1", "", nil, ""), b("1.0.2", "1.0.1", nil, "")}, chain: "p.v1.0.2 p.v1.0.1"},
		{name: "replacement cycle, no head", in: []Bundle{b("1.0.1", "1.0.2", nil, ""), b("1.0.2", "1.0.1", nil, "")},
			wantErr: `no channel heads (entries not replaced by another entry) found in channel "c" of package "p"`},
		{name: "replacement cycle below the head", in: []Bundle{b("1.0.1", "1.0.2", nil, ""), b("1.0.2", "1.0.3", nil, ""), b("1.0.3", "1.0.2", nil, "")},
			wantErr: `a cycle exists in the chain of replacement beginning with "p.v1.0.1" in channel "c" of package "p"`},
		{name: "skipped and replaced entry omitted", in: []Bundle{b("1.0.2", "1.0.1", []string{"1.0.1"}, ""), b("1.0.1", "", nil, "")},
			chain: "p.v1.0.2", others: "p.v1.0.1"},
		{name: "skipped entry omitted", in: []Bundle{b("1.0.3", "1.0.2", []string{"1.0.1"}, ""), b("1.0.2", "1.0.1", nil, ""), b("1.0.1", "", nil, "")},
			chain: "p.v1.0.3 p.v1.0.2", others: "p.v1.0.1"},
		{name: "two replaces chains", in: []Bundle{b("1.0.1", "", nil, ""), b("1.0.2", "", nil, "")},
			wantErr: `2 replacement chains were found in channel "c" of package "p": heads p.v1.0.1, p.v1.0.2`},
		// Bundles with an olm.skipRange and no replaces are each a head of
		// their own: OLM cannot order them (opm refuses such a channel too,
		// operator-registry alpha/model/model.go Channel.Head).
		{name: "skipRange-only bundles", in: []Bundle{b("1.0.1", "", nil, ""), b("1.0.2", "", nil, ">=1.0.0 <1.0.2")},
			wantErr: "2 replacement chains"},
		{name: "one skipRange-only bundle", in: []Bundle{b("1.0.2", "", nil, ">=1.0.0 <1.0.2")}, chain: "p.v1.0.2"},
		{name: "a bundle off the chain", in: []Bundle{b("1.0.3", "1.0.2", []string{"1.0.0"}, ""), b("1.0.2", "", nil, ""), b("1.0.0", "", nil, "")},
			chain: "p.v1.0.3 p.v1.0.2", others: "p.v1.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chain, others, err := SortChannel("p", "c", tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if names(chain) != tc.chain || names(others) != tc.others {
				t.Errorf("chain %q others %q, want %q and %q", names(chain), names(others), tc.chain, tc.others)
			}
		})
	}
}

// Routes on catalogs the table does not describe: what OLM offers from an
// installed CSV is the bundle nearest the head whose olm.skipRange
// includes it or whose replaces or skips name it (resolver.go
// getSubscriptionVariables, cache/predicates.go).
func TestRouteOnGraphs(t *testing.T) {
	mk := func(bs ...Bundle) *Channel {
		t.Helper()
		ch, err := NewChannel("p", "stable", pCSV, bs)
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	v := func(s string) Version { x, _ := Parse(s); return x }
	// A z-stream past the table: 4.22.7 replaces 4.22.6 and skips the
	// minor's earlier z-streams by range, as HCO's bundles do.
	zstream := mk(
		b("4.22.7", "4.22.6", nil, ">=4.22.0 <4.22.7"),
		b("4.22.6", "4.22.0", nil, ">=4.22.0 <4.22.6"),
		b("4.22.0", "4.21.8", nil, ""),
		b("4.21.8", "", nil, ""),
	)
	// A head that skips the pin by name: 4.22.6 is out of OLM's order.
	skipsPin := mk(
		b("4.22.7", "4.22.6", []string{"4.22.6"}, ">=4.22.0 <4.22.7"),
		b("4.22.6", "4.22.0", nil, ">=4.22.0 <4.22.6"),
		b("4.22.0", "4.21.8", nil, ""),
		b("4.21.8", "", nil, ""),
	)
	for _, tc := range []struct {
		name     string
		ch       *Channel
		from, to string
		steps    string
		reached  bool
		explains string
	}{
		{name: "the issue's case: head one z-stream past the pin", ch: zstream, from: "4.21.8", to: "4.22.6", steps: "4.22.0",
			explains: `then offers p.v4.22.7 (its olm.skipRange ">=4.22.0 <4.22.7" includes 4.22.0), newer than p.v4.22.6 pinned in Git`},
		{name: "the new head is reached", ch: zstream, from: "4.21.8", to: "4.22.7", steps: "4.22.0 4.22.7", reached: true},
		{name: "skipRange only: from a z-stream nobody replaces", ch: zstream, from: "4.22.3", to: "4.22.7", steps: "4.22.7", reached: true,
			explains: `installs p.v4.22.7 (its olm.skipRange ">=4.22.0 <4.22.7" includes 4.22.3): the pin`},
		{name: "the minor's first bundle is reached", ch: zstream, from: "4.21.8", to: "4.22.0", steps: "4.22.0", reached: true},
		{name: "a head that skips the pin", ch: skipsPin, from: "4.22.0", to: "4.22.6",
			explains: "offers p.v4.22.7 (its olm.skipRange"},
		{name: "a skipped pin is reached by nothing", ch: skipsPin, from: "4.21.8", to: "4.22.6", steps: "4.22.0"},
		{name: "nothing to do", ch: zstream, from: "4.22.7", to: "4.22.7", reached: true, explains: "has nothing to do"},
		{name: "offers nothing", ch: mk(b("2.0.0", "1.0.0", nil, ""), b("1.0.0", "", nil, "")), from: "0.9.0", to: "2.0.0",
			explains: "offers nothing after p.v0.9.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.ch.Route(v(tc.from), v(tc.to))
			var steps []string
			for _, s := range r.Versions() {
				steps = append(steps, s.String())
			}
			if strings.Join(steps, " ") != tc.steps || r.Reached != tc.reached {
				t.Errorf("steps %q reached %v, want %q %v: %s", steps, r.Reached, tc.steps, tc.reached, r.Explain())
			}
			if !strings.Contains(r.Explain(), tc.explains) {
				t.Errorf("explains %q, want it to contain %q", r.Explain(), tc.explains)
			}
		})
	}
	if !skipsPin.Has(v("4.22.6")) || skipsPin.Lands(v("4.22.6")) {
		t.Errorf("a skipped bundle is in the channel (a first install lands on it) and no upgrade lands on it: Has %v Lands %v", skipsPin.Has(v("4.22.6")), skipsPin.Lands(v("4.22.6")))
	}
	if got := names(skipsPin.Others); got != "p.v4.22.6" {
		t.Errorf("others %q", got)
	}
	// An olm.skipRange OLM cannot parse is no edge (source_registry.go
	// newOperatorFromBundle keeps a range only when it parses).
	bad := mk(b("1.0.2", "1.0.1", nil, "not a range"), b("1.0.1", "", nil, ""))
	if _, _, ok := bad.Next(v("1.0.0")); ok {
		t.Error("an unparsable skipRange offered an upgrade")
	}
	if slices.ContainsFunc(bad.Bundles, func(x Bundle) bool { return x.skip != nil }) {
		t.Error("an unparsable skipRange was kept")
	}
}
