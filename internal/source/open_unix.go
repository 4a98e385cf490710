//go:build unix

package source

import (
	"os"
	"syscall"
)

// openFlags open an input without blocking: a FIFO (or a device) named
// *.yaml would otherwise hang the build at open until a writer came.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK
