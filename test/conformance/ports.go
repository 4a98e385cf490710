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
// bytes before them. It returns path and the port.
func CopyWithPort(prog, path, addr string, first, last int, other func(before []byte) bool) (string, int, error) {
	data, err := os.ReadFile(prog)
	if err != nil {
		return "", 0, err
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
		return "", 0, fmt.Errorf("%s: want one standalone %q literal, found %d", prog, addr, len(at))
	}
	span := int64(last - first + 1)
	n, err := rand.Int(rand.Reader, big.NewInt(span))
	if err != nil {
		return "", 0, err
	}
	for i := range span {
		num := int(int64(first) + (n.Int64()+i)%span)
		port := fmt.Sprintf(":%d", num)
		if len(port) != len(addr) {
			return "", 0, fmt.Errorf("port %s is not as long as %s", port, addr)
		}
		l, err := net.Listen("tcp", port)
		if err != nil {
			continue
		}
		l.Close()
		copy(data[at[0]:], port)
		return path, num, os.WriteFile(path, data, 0o755)
	}
	return "", 0, fmt.Errorf("no free port between %d and %d for %s's %s", first, last, prog, addr)
}
