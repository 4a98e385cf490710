package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/virtc/virtc/internal/approve"
)

// runApprove is `virtc approve-installplan`, what the approver Job of a
// compiled Platform runs (render.Approver): it reads the graph of the
// catalog the Subscription installs from, approves the InstallPlans on
// OLM's route to the pinned CSV in it, or none when the route does not
// land there, and waits until that CSV has succeeded.
func runApprove(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("approve-installplan", "", stderr)
	ns := fs.String("namespace", "", "the operator's namespace (the Subscription's)")
	sub := fs.String("subscription", "", "the Subscription's name")
	csv := fs.String("csv", "", "the ClusterServiceVersion pinned in Git")
	head := fs.String("catalog-head", "", "the CSV at the head of the catalog's channel, as the build assumed it; the approver decides on the live catalog the Subscription names and says when its head differs")
	timeout := fs.Duration("timeout", 45*time.Minute, "give up after this long; transient API errors are retried until then")
	interval := fs.Duration("interval", 10*time.Second, "polling period")
	rest, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	if len(rest) > 0 || *ns == "" || *sub == "" || *csv == "" {
		fmt.Fprintln(stderr, "virtc approve-installplan: --namespace, --subscription and --csv are required, --catalog-head is optional, and nothing else")
		return ExitUsage
	}
	api, err := approve.InCluster()
	if err != nil {
		fmt.Fprintf(stderr, "virtc approve-installplan: %v\n", err)
		return ExitFailed
	}
	err = approve.Run(context.Background(), api, approve.Options{
		Namespace: *ns, Subscription: *sub, CSV: *csv, CatalogHead: *head,
		Timeout: *timeout, Interval: *interval, Log: stdout,
	})
	if err != nil {
		fmt.Fprintf(stderr, "virtc approve-installplan: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}
