package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/virtc/virtc/api"
	"github.com/virtc/virtc/internal/compile"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/eligibility"
	"github.com/virtc/virtc/internal/yamlorder"
)

// runFacts prints the PlatformFacts of the Platform among the inputs: the
// file a platform repository publishes and tenant repositories commit, so
// that their builds judge acceptance evidence on the platform's exact
// version instead of skipping the eligibility gate.
func runFacts(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("facts", "PATH...", stderr)
	paths, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "virtc facts: name the platform repository's files or directories")
		return ExitUsage
	}
	req, ok := request(api.CompilerSpec{Paths: paths}, place{}, stderr)
	if !ok {
		return ExitFailed
	}
	// The facts are the Platform's: VMs that lack evidence do not stop them.
	res := compile.Run(req, func(o *compile.Options) { o.GateWarnings = true }, &diag.List{})
	if code := report(res, stderr); code != ExitOK {
		return code
	}
	p := res.Model.Platform
	if p == nil {
		fmt.Fprintln(stderr, "virtc facts: the inputs have no Platform: run it on the platform repository")
		return ExitFailed
	}
	fmt.Fprintf(stdout, "# The facts of Platform %s, published by virtc facts: commit this file\n# to tenant repositories, and publish it again after every platform upgrade.\n", p.Name)
	fmt.Fprintf(stdout, "apiVersion: virtc.dev/v1alpha1\nkind: PlatformFacts\nmetadata:\n  name: %s\nspec:\n  version: %s\n", p.Name, p.Version.String())
	if p.Obj.Spec.UpgradingTo != "" {
		fmt.Fprintf(stdout, "  upgradingTo: %s\n", p.Obj.Spec.UpgradingTo)
	}
	if mon := p.Obj.Spec.Monitoring; mon != nil {
		data, err := yamlorder.Marshal(map[string]any{"monitoring": mon})
		if err != nil {
			fmt.Fprintf(stderr, "virtc facts: %v\n", err)
			return ExitFailed
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			fmt.Fprintf(stdout, "  %s\n", line)
		}
	}
	if gateVersion, judged := eligibility.PlatformGate(res.Model); gateVersion != "" {
		var accepted, missing []eligibility.Judged
		for _, j := range judged {
			if j.Evidence != "" {
				accepted = append(accepted, j)
			} else {
				missing = append(missing, j)
			}
		}
		if len(accepted) > 0 {
			fmt.Fprintln(stdout, "  # the exact-version compatibility gate's checks the platform's Evidence accepts")
			fmt.Fprintln(stdout, "  compatibilityGate:")
			for _, j := range accepted {
				fmt.Fprintf(stdout, "    - check: %s\n      evidence: %s\n", j.Check, j.Evidence)
			}
		}
		for _, j := range missing {
			fmt.Fprintf(stderr, "virtc facts: warning: the compatibility gate's check %s lacks evidence on %s (%s): tenant builds refuse production VMs until it is recorded and the facts published again\n", j.Check, gateVersion, j.Why)
		}
	}
	return ExitOK
}
