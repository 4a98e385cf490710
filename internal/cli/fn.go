package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/krm"
)

// runFn runs virtc as a KRM function. kustomize and kpt exec a function
// without arguments and with a ResourceList on stdin, so Main also comes
// here when it gets no arguments and stdin is not a terminal.
func runFn(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("fn", "< ResourceList", stderr)
	prof := addProfileFlags(fs)
	if rest, code, ok := parse(fs, args); !ok {
		return code
	} else if len(rest) > 0 {
		fmt.Fprintf(stderr, "virtc fn: takes no arguments (the inputs are the ResourceList's items and the paths its functionConfig names)\n")
		return ExitUsage
	}
	batchGC()
	stop := prof.start(stderr)
	diags, err := krm.Run(stdin, stdout)
	stop()
	if errors.Is(err, krm.ErrNoResourceList) {
		fmt.Fprintf(stderr, "virtc: %v\n(virtc runs as a KRM function when started without arguments and with input on stdin; run 'virtc help' for its commands)\n", err)
		return ExitUsage
	}
	if diags != nil {
		io.WriteString(stderr, diag.Format(diags.Sorted()))
	}
	if err == nil {
		return ExitOK
	}
	if diags != nil && diags.HasErrors() {
		n := len(diags.Errors())
		fmt.Fprintf(stderr, "virtc: %d error%s\n", n, plural(n))
	} else {
		fmt.Fprintf(stderr, "virtc fn: %v\n", err)
	}
	return ExitFailed
}

// isTerminal reports whether stream (stdin, stdout) is a terminal: a
// character device, which includes /dev/null (`virtc </dev/null` prints
// the usage). Streams that are not files, as in tests, are pipes for this
// purpose.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
