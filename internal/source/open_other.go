//go:build !unix

package source

import "os"

const openFlags = os.O_RDONLY
