package jsonnet

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	jsonnet "github.com/google/go-jsonnet"

	"github.com/virtc/virtc/internal/source"
)

// libName is the name by which every Jsonnet input imports the library
// shipped in the binary: virtc.libsonnet, with helpers for the common
// shapes of intents and catalogs.
const libName = "virtc.libsonnet"

//go:embed virtc.libsonnet
var libText string

// embeddedLib is the name the embedded library has in messages.
const embeddedLib = "<embedded>/lib/" + libName

var libContents = jsonnet.MakeContents(libText)

// importer resolves imports of one evaluation. A relative import is looked
// up beside the importing file, then at the input root; it must stay inside
// the root, also after following symlinks. virtc.libsonnet is the embedded
// library. Nothing else is reachable: no absolute paths, no search path, no
// network.
type importer struct {
	main     string // the input file, as shown
	root     string // the input root, as shown; "" allows no file imports
	absRoot  string // root made absolute
	realRoot string // absRoot with symlinks resolved

	mu       sync.Mutex
	results  map[[2]string]imported
	contents map[string]jsonnet.Contents // by foundAt, so a file is one Contents
	user     map[string]bool             // files of the user, by foundAt
	// placed are errors in imported files, by the text go-jsonnet reports
	// at the import: report() puts them in their place instead.
	placed map[string]staticError
}

type imported struct {
	contents jsonnet.Contents
	foundAt  string
	err      error
}

func newImporter(file, root string) (*importer, error) {
	im := &importer{
		main:     file,
		root:     root,
		results:  map[[2]string]imported{},
		contents: map[string]jsonnet.Contents{},
		user:     map[string]bool{filepath.Clean(file): true},
		placed:   map[string]staticError{},
	}
	if root == "" {
		return im, nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the input root %s: %v", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve the input root %s: %v", root, unwrap(err))
	}
	im.absRoot, im.realRoot = abs, real
	return im, nil
}

// Import implements jsonnet.Importer. Results, errors included, are cached:
// go-jsonnet requires the same answer for the same question.
func (im *importer) Import(from, path string) (jsonnet.Contents, string, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	key := [2]string{from, path}
	if r, ok := im.results[key]; ok {
		return r.contents, r.foundAt, r.err
	}
	r := im.resolve(from, path)
	if r.err != nil && !strings.HasPrefix(r.err.Error(), "import ") {
		// go-jsonnet reports the error as it is, at the import.
		r.err = fmt.Errorf("import %q: %w", path, r.err)
	}
	im.results[key] = r
	return r.contents, r.foundAt, r.err
}

// placedError returns the located error in an imported file that
// go-jsonnet reported as msg.
func (im *importer) placedError(msg string) (staticError, bool) {
	im.mu.Lock()
	defer im.mu.Unlock()
	se, ok := im.placed[msg]
	return se, ok
}

// isUser reports whether a file name of a stack frame is one of the user's
// files (the input or a file it imported), as opposed to the embedded
// library or the standard library.
func (im *importer) isUser(name string) bool {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.user[filepath.Clean(name)]
}

func (im *importer) refuse(format string, args ...any) imported {
	where := "and to " + libName
	if im.root != "" {
		where = "inside the input root " + im.root + " " + where
	}
	return imported{err: fmt.Errorf("refused: %s (imports resolve only %s)", fmt.Sprintf(format, args...), where)}
}

func (im *importer) resolve(from, path string) imported {
	if path == libName {
		return imported{contents: libContents, foundAt: embeddedLib}
	}
	if from == embeddedLib {
		return imported{err: fmt.Errorf("the embedded %s imports nothing else", libName)}
	}
	if filepath.IsAbs(path) || strings.HasPrefix(path, "/") {
		return im.refuse("it is an absolute path")
	}
	if im.root == "" {
		return imported{err: fmt.Errorf("refused: files cannot be imported here, only %s", libName)}
	}
	candidates := []string{filepath.Join(filepath.Dir(from), path)}
	if atRoot := filepath.Join(im.root, path); atRoot != candidates[0] {
		candidates = append(candidates, atRoot)
	}
	for _, c := range candidates {
		abs, err := filepath.Abs(c)
		if err != nil {
			return imported{err: err}
		}
		if !source.Within(im.absRoot, abs) {
			return im.refuse("it leaves the input root")
		}
		real, err := filepath.EvalSymlinks(abs)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return imported{err: unwrap(err)}
		}
		if !source.Within(im.realRoot, real) {
			return im.refuse("it is a symlink that leads outside the input root")
		}
		info, err := os.Stat(real)
		if err != nil {
			return imported{err: unwrap(err)}
		}
		if !info.Mode().IsRegular() {
			return imported{err: fmt.Errorf("%s is not a regular file", c)}
		}
		if info.Size() > source.MaxFileSize {
			return imported{err: fmt.Errorf("%s is larger than the %d MiB limit for one file", c, source.MaxFileSize>>20)}
		}
		foundAt := filepath.Clean(c)
		im.user[foundAt] = true
		contents, ok := im.contents[foundAt]
		if !ok {
			data, err := source.ReadFile(real)
			if errors.Is(err, source.ErrTooLarge) {
				err = fmt.Errorf("%s is larger than the %d MiB limit for one file", c, source.MaxFileSize>>20)
			}
			if err != nil {
				return imported{err: unwrap(err)}
			}
			// Imported code is held to the same rule as the input. (Text
			// read with importstr that does not parse as Jsonnet is not
			// code and passes.)
			node, err := jsonnet.SnippetToAST(foundAt, string(data))
			var se staticError
			if errors.As(err, &se) {
				im.placed[se.Error()] = se
			}
			if loc, bad := tailstrict(node); err == nil && bad {
				err := fmt.Errorf("import %q: refused: %s:%d:%d: %s", path, foundAt, loc.Begin.Line, loc.Begin.Column, tailstrictMsg)
				im.placed[err.Error()] = &locatedError{loc: loc, msg: tailstrictMsg}
				return imported{err: err}
			}
			contents = jsonnet.MakeContentsRaw(data)
			im.contents[foundAt] = contents
		}
		return imported{contents: contents, foundAt: foundAt}
	}
	if len(candidates) == 1 {
		return imported{err: fmt.Errorf("no such file in %s", filepath.Dir(from))}
	}
	return imported{err: fmt.Errorf("no such file in %s or in the input root %s", filepath.Dir(from), im.root)}
}

func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
