package cmp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"slices"
	"strconv"
	"strings"
)

// An entry is one file, named by its key: a header, then every tenant's
// output, one after another in the order of the tenants' names. A call
// reads the header and its tenant's bytes, whatever the fleet's size: one
// file opened, none listed. The header is a first line
//
//	virtc-cmp-entry 4 SIZE SUM
//
// and then SIZE bytes of netstrings (LENGTH:BYTES,): the number of the
// Compiler's flags and each flag, the number of its paths and each path,
// the build's diagnostics, the number of tenants and for each its name,
// its output's offset (from the end of the header) and length, and the
// SHA-256 of its output (32 bytes). SUM is the SHA-256 of the netstrings,
// in hex.
//
// A call checks the sums of the bytes it prints, the netstrings and its
// tenant's output, and misses on a mismatch: a flipped byte keeps every
// length in place, so only a sum finds it. The sums are per tenant
// because a call prints one tenant's bytes: one sum of the whole entry
// would make every call read every tenant's output (46 MB at 10,000
// VMs, for each of 500 tenants).
const entryMagic = "virtc-cmp-entry 4 "

// Output is a tenant's output in the order written: the concatenation of
// Parts (the full output's objects of that tenant and the separators
// between them, as the build printed them), handed over without copying.
type Output struct {
	Tenant string
	Parts  [][]byte
}

// size is the output's length.
func (o Output) size() int64 {
	var n int64
	for _, p := range o.Parts {
		n += int64(len(p))
	}
	return n
}

// sum is the SHA-256 of the output's bytes.
func (o Output) sum() []byte {
	h := sha256.New()
	for _, p := range o.Parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// entryHeader is an entry's header, with outputs in the order of the
// tenants' names (which is the order of their bytes after the header).
func entryHeader(flags, paths []string, diags string, outputs []Output) []byte {
	var b []byte
	str := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
		b = append(b, ',')
	}
	num := func(n int64) { str(strconv.FormatInt(n, 10)) }
	num(int64(len(flags)))
	for _, f := range flags {
		str(f)
	}
	num(int64(len(paths)))
	for _, p := range paths {
		str(p)
	}
	str(diags)
	num(int64(len(outputs)))
	var off int64
	for _, o := range outputs {
		str(o.Tenant)
		num(off)
		num(o.size())
		str(string(o.sum()))
		off += o.size()
	}
	sum := sha256.Sum256(b)
	head := append([]byte(entryMagic), strconv.Itoa(len(b))...)
	head = hex.AppendEncode(append(head, ' '), sum[:])
	return append(append(head, '\n'), b...)
}

// writeEntry writes the entry of these outputs to w; it orders them by
// tenant.
func writeEntry(w io.Writer, flags, paths []string, diags string, outputs []Output) error {
	outputs = slices.Clone(outputs)
	slices.SortFunc(outputs, func(a, b Output) int { return strings.Compare(a.Tenant, b.Tenant) })
	if _, err := w.Write(entryHeader(flags, paths, diags, outputs)); err != nil {
		return err
	}
	for _, o := range outputs {
		for _, p := range o.Parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// headerSize reads an entry's first line from its first bytes: the length
// of that line and of the rest of the header, and the rest's SHA-256;
// false when they do not begin an entry of this version.
func headerSize(first []byte) (line, size int, sum [sha256.Size]byte, ok bool) {
	rest, found := bytes.CutPrefix(first, []byte(entryMagic))
	end := bytes.IndexByte(rest, '\n')
	sp := bytes.IndexByte(rest[:max(end, 0)], ' ')
	// lowercase only, as written: "A" would decode as "a" does
	if !found || end < 1 || sp < 1 || !isKey(string(rest[sp+1:end])) {
		return 0, 0, sum, false
	}
	size, err := strconv.Atoi(string(rest[:sp]))
	if err != nil || size < 0 {
		return 0, 0, sum, false
	}
	if _, err := hex.Decode(sum[:], rest[sp+1:end]); err != nil {
		return 0, 0, sum, false
	}
	return len(entryMagic) + end + 1, size, sum, true
}

// header is a parsed entry header.
type header struct {
	flags, paths []string
	diags        string
	// tenants is the rest of the header: each tenant's name, offset and
	// length (found by lookup).
	tenants []byte
}

// parseHeader parses the header's netstrings (after its first line).
func parseHeader(b []byte) (h header, ok bool) {
	r := netstrings{b: b}
	list := func() []string {
		n := r.num()
		if n < 0 || n > int64(len(r.b)) {
			r.bad = true
			return nil
		}
		l := make([]string, 0, n)
		for range n {
			l = append(l, string(r.next()))
		}
		return l
	}
	h.flags = list()
	h.paths = list()
	h.diags = string(r.next())
	r.num()
	h.tenants = r.b
	return h, !r.bad
}

// lookup finds a tenant's output: its offset after the header, its
// length and its SHA-256. It reads every tenant's place, which must follow
// each other and end at the end of the file (size bytes after the
// header): a header that does not add up is no entry.
func (h header) lookup(tenant string, size int64) (off, length int64, sum [sha256.Size]byte, ok bool) {
	r := netstrings{b: h.tenants}
	var end int64
	for len(r.b) > 0 && !r.bad {
		name := r.next()
		o, n := r.num(), r.num()
		s := r.next()
		if r.bad || o != end || n < 0 || len(s) != sha256.Size {
			return 0, 0, sum, false
		}
		if string(name) == tenant {
			off, length, sum, ok = o, n, [sha256.Size]byte(s), true
		}
		end += n
	}
	return off, length, sum, ok && !r.bad && end == size
}

// netstrings reads LENGTH:BYTES, items; bad is set on the first malformed
// one (and every read after it is empty).
type netstrings struct {
	b   []byte
	bad bool
}

func (r *netstrings) next() []byte {
	if r.bad {
		return nil
	}
	colon := bytes.IndexByte(r.b, ':')
	n, err := strconv.Atoi(string(r.b[:max(colon, 0)]))
	if colon < 1 || err != nil || n < 0 || colon+1+n >= len(r.b) || r.b[colon+1+n] != ',' {
		r.bad = true
		return nil
	}
	s := r.b[colon+1 : colon+1+n]
	r.b = r.b[colon+2+n:]
	return s
}

func (r *netstrings) num() int64 {
	s := r.next()
	n, err := strconv.ParseInt(string(s), 10, 64)
	if err != nil {
		r.bad = true
		return -1
	}
	return n
}
