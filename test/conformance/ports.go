package conformance

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"math/big"
	"net"
	"os"
)

// CopyWithPort copies the program prog to path with its one standalone
// literal addr (such as ":8080"), a listen address the program hard-codes,
// changed to a port of the same length between first and last that nothing
// listens on now. On a cluster each pod has its own network namespace;
// here every component shares the host's. other says which occurrences are
// not the address (the end of a longer string: a URL's host), by the
// bytes before them.
func CopyWithPort(prog, path, addr string, first, last int, other func(before []byte) bool) (string, error) {
	data, err := os.ReadFile(prog)
	if err != nil {
		return "", err
	}
	var at []int
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(addr))
		if j < 0 {
			break
		}
		if !other(data[:i+j]) {
			at = append(at, i+j)
		}
		i += j + len(addr)
	}
	if len(at) != 1 {
		return "", fmt.Errorf("%s: want one standalone %q literal, found %d", prog, addr, len(at))
	}
	span := int64(last - first + 1)
	n, err := rand.Int(rand.Reader, big.NewInt(span))
	if err != nil {
		return "", err
	}
	for i := range span {
		port := fmt.Sprintf(":%d", int64(first)+(n.Int64()+i)%span)
		if len(port) != len(addr) {
			return "", fmt.Errorf("port %s is not as long as %s", port, addr)
		}
		l, err := net.Listen("tcp", port)
		if err != nil {
			continue
		}
		l.Close()
		copy(data[at[0]:], port)
		return path, os.WriteFile(path, data, 0o755)
	}
	return "", fmt.Errorf("no free port between %d and %d for %s's %s", first, last, prog, addr)
}
