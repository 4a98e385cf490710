// Package source reads input files into YAML documents that remember where
// they came from, so every later stage can point at a file, line and column.
package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/par"
)

// MaxFileSize bounds one input file. Intents are small; a file this large is a
// mistake (or an attack), and reading it whole would cost memory for nothing.
const MaxFileSize = 8 << 20

// The bounds of an input beside its size (docs/security.md). A YAML node
// costs about 160 bytes of memory however few bytes of text make it, so
// a file of short lines (an 8 MiB label map: 1.3 million nodes) or of
// empty documents (two million `---` lines) would cost hundreds of times
// its size, and more time than Argo CD gives a plugin. Each is counted on
// the bytes before the file is parsed; a repository's real files are far
// below them (an intent is tens of lines, the largest CRD upstream 32,000).
const (
	// MaxDocuments bounds the YAML documents of one file.
	MaxDocuments = 10_000
	// MaxItems bounds the lines and flow-collection items (commas) of
	// one file: together they bound its nodes.
	MaxItems = 250_000
	// MaxDepth bounds how deep below an input root directories are read.
	MaxDepth = 32
	// MaxInput bounds the bytes of a build's inputs: its files, the
	// documents on stdin and a KRM function's ResourceList.
	MaxInput = 256 << 20
)

// Doc is one YAML document of an input.
type Doc struct {
	// File is the path to show in messages (as the user named it).
	File string
	// Rel is the path relative to the input root, recorded in the output's
	// source annotation so it does not depend on where virtc was run.
	Rel string
	// Index is the document's position in its file, from 0.
	Index int
	// Node is the document's content node (a mapping for a valid object).
	Node *yaml.Node
	// NoLines is set for documents whose line numbers do not refer to the
	// file (Jsonnet output, a KRM function's items): positions then name the
	// file only, unless Lines is set.
	NoLines bool
	// Lines, when set, is the document as written in File, used only for
	// positions when Node's lines refer elsewhere (a KRM function's item
	// found in its file): a field the item has but the file lacks (added by
	// an overlay) is placed at its nearest enclosing field in the file.
	Lines *yaml.Node
	// Broken lists the field paths with structural errors that decoding
	// found (set by package decode): later checks of what lies there or
	// in the objects around it would only repeat them, so Pos marks those
	// places shadowed (see diag.Covers).
	Broken []string
}

// Pos locates a field path such as "spec.disks[1].size" in the document. It
// returns the position of the deepest node of the path that exists.
func (d *Doc) Pos(field string) diag.Pos {
	p := diag.Pos{File: d.File, Shadowed: d.Shadows(field)}
	lines := d.Node
	if d.NoLines {
		lines = d.Lines
	}
	if lines == nil {
		return p
	}
	n := Lookup(lines, field)
	p.Line, p.Col = n.Line, n.Column
	return p
}

// Shadows reports whether a structural error of the document covers the
// field path (see Broken).
func (d *Doc) Shadows(field string) bool {
	if d == nil {
		// A VM the rules judge that no document describes (the cluster's
		// tenant-wide allowances, internal/rules).
		return false
	}
	for _, b := range d.Broken {
		if diag.Covers(b, field) {
			return true
		}
	}
	return false
}

// Lookup walks a field path through mapping keys and sequence indexes and
// returns the deepest node it reaches.
func Lookup(n *yaml.Node, field string) *yaml.Node {
	for _, seg := range splitPath(field) {
		next := child(n, seg)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

func child(n *yaml.Node, seg string) *yaml.Node {
	if i, err := strconv.Atoi(seg); err == nil && n.Kind == yaml.SequenceNode {
		if i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == seg {
			return n.Content[i+1]
		}
	}
	return nil
}

// splitPath turns `spec.disks[1].size` into [spec disks 1 size].
func splitPath(field string) []string {
	if field == "" {
		return nil
	}
	var out []string
	for _, part := range strings.Split(field, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				out = append(out, part[i+1:])
				break
			}
			out = append(out, part[i+1:i+j])
			part = part[i+j+1:]
		}
	}
	return out
}

// Parse splits data into YAML documents. Syntax errors are reported with the
// line the parser names; parsing stops at the first one, as YAML cannot
// recover from it.
func Parse(file, rel string, data []byte, diags *diag.List) []*Doc {
	if !utf8.Valid(data) {
		line, col := firstInvalidUTF8(data)
		diags.Errorf(diag.Pos{File: file, Line: line, Col: col}, "", "file is not valid UTF-8 (save it as UTF-8)")
		return nil
	}
	if n := countDocuments(data); n > MaxDocuments {
		diags.Errorf(diag.Pos{File: file}, "", "file holds %d YAML documents, more than the %d one file may hold (split it into several files)", n, MaxDocuments)
		return nil
	}
	if n := lineBreaks(data) + bytes.Count(data, []byte{','}); n > MaxItems {
		diags.Errorf(diag.Pos{File: file}, "", "file holds %d lines and list items, more than the %d one file may hold (split it into several files)", n, MaxItems)
		return nil
	}
	if nodes, ok := fastParse(data); ok {
		docs := make([]*Doc, len(nodes))
		for i, n := range nodes {
			docs[i] = &Doc{File: file, Rel: rel, Index: i, Node: n}
		}
		return docs
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*Doc
	for i := 0; ; i++ {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, msg := yamlError(err)
			diags.Errorf(diag.Pos{File: file, Line: line, Col: 1}, "", "invalid YAML: %s", msg)
			return nil
		}
		if len(n.Content) == 0 {
			continue
		}
		content := n.Content[0]
		if content.Kind == yaml.ScalarNode && content.Tag == "!!null" {
			continue // an empty document between separators
		}
		docs = append(docs, &Doc{File: file, Rel: rel, Index: i, Node: content})
	}
	return docs
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

func yamlError(err error) (int, string) {
	msg := err.Error()
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return line, m[2]
	}
	return 1, strings.TrimPrefix(msg, "yaml: ")
}

// breaks are what the YAML parser ends a line at: line feed, carriage
// return, and the next line, line and paragraph separators
// (go.yaml.in/yaml/v3 yamlprivateh.go, is_break).
var breaks = [][]byte{{'\n'}, {'\r'}, []byte("\u0085"), []byte("\u2028"), []byte("\u2029")}

// lineBreaks counts data's line breaks (a CR LF counts twice: an upper
// bound).
func lineBreaks(data []byte) int {
	n := 0
	for _, b := range breaks {
		n += bytes.Count(data, b)
	}
	return n
}

// countDocuments counts the document markers (`---` at a line's start,
// after any break) of data, an upper bound of its documents less one.
func countDocuments(data []byte) int {
	n := 1
	if bytes.HasPrefix(data, []byte("---")) {
		n++
	}
	for _, b := range breaks {
		n += bytes.Count(data, append(append([]byte(nil), b...), "---"...))
	}
	return n
}

// Options controls which files a directory walk reads.
type Options struct {
	// Evaluate turns a .jsonnet file into documents. Nil means Jsonnet files
	// are reported as unsupported.
	Evaluate func(file, rel, root string, data []byte, diags *diag.List) []*Doc
	// Base, when set, is the directory Rel paths are relative to, for the
	// files below it (`virtc diff OLD NEW` names each tree's files from the
	// tree's top). Otherwise see SourcePath.
	Base string
}

// IsInput reports whether a file name is read as an input when its directory
// is named: YAML, JSON and Jsonnet files, except kustomizations and Jsonnet
// libraries, which are read by the tools that own them.
func IsInput(name string) bool {
	base := filepath.Base(name)
	switch base {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return false
	}
	switch filepath.Ext(base) {
	case ".yaml", ".yml", ".json", ".jsonnet":
		return true
	}
	return false
}

// Read reads every path: files as given, directories recursively in lexical
// order, skipping hidden entries. A missing path is an error.
func Read(paths []string, opts Options, diags *diag.List) []*Doc {
	var docs []*Doc
	var total int64
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			diags.Errorf(diag.Pos{File: root}, "", "cannot read: %v", unwrapPathError(err))
			continue
		}
		if !info.IsDir() {
			// A file named on its own: its directory is its input root.
			if !withinInput([]string{root}, &total, diags) {
				return docs
			}
			if confined(filepath.Dir(root), root, diags) {
				docs = append(docs, readFile(root, opts.rel(root, filepath.Dir(root)), filepath.Dir(root), opts, diags)...)
			}
			continue
		}
		files, links := inputFiles(root, diags)
		slices.Sort(files)
		if !withinInput(files, &total, diags) {
			return docs
		}
		// A symlink is followed only when its target stays inside the root
		// (as Jsonnet imports are): `evil.yaml -> /etc/passwd` in a
		// repository must not put the repo-server's files into the output
		// or the messages.
		files = slices.DeleteFunc(files, func(f string) bool { return links[f] && !confined(root, f, diags) })
		// YAML and JSON files are read and parsed on all CPUs; each file's
		// documents and diagnostics are then taken in file order, so the
		// result is what reading them one by one gives. Jsonnet is
		// evaluated in order on this goroutine (Evaluate need not be safe
		// for concurrent use).
		parsed := make([]parsedFile, len(files))
		par.For(len(files), func(i int) {
			if !special(files[i]) {
				parsed[i] = parseFile(files[i], opts.rel(files[i], root))
			}
		})
		for i, f := range files {
			if special(f) {
				docs = append(docs, readFile(f, opts.rel(f, root), root, opts, diags)...)
				continue
			}
			docs = append(docs, parsed[i].finish(diags)...)
		}
	}
	return docs
}

// withinInput adds the sizes of files to total and reports whether the
// build's inputs stay within MaxInput, before any is read: what a read
// would cost is never spent on inputs that are refused anyway.
func withinInput(files []string, total *int64, diags *diag.List) bool {
	for _, f := range files {
		if info, err := os.Stat(f); err == nil && info.Mode().IsRegular() {
			*total += info.Size()
		}
	}
	if *total > MaxInput {
		diags.Errorf(diag.Pos{File: "<inputs>"}, "", "the inputs hold %d MiB, more than the %d MiB one build reads (name fewer directories, or split the repository's Applications)", *total>>20, MaxInput>>20)
		return false
	}
	return true
}

// inputFiles lists the input files below root, skipping hidden entries. A
// symlinked directory is walked when its target stays inside the root and
// refused when it leaves it, as a symlinked file is read or refused (a
// link back to a directory being walked is not followed: it would loop);
// links marks the files that are symlinks themselves, for confined.
func inputFiles(root string, diags *diag.List) (files []string, links map[string]bool) {
	links = map[string]bool{}
	// open holds the real paths of the directories being walked: a link
	// back to one of them would loop.
	open := map[string]bool{}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > MaxDepth {
			diags.Errorf(diag.Pos{File: dir}, "", "cannot read: directories nested more than %d deep below the input root %s are not read (move its files up)", MaxDepth, root)
			return
		}
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			if open[real] {
				return
			}
			open[real] = true
			defer delete(open, real)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			diags.Errorf(diag.Pos{File: dir}, "", "cannot read: %v", unwrapPathError(err))
			return
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			isLink, isDir := e.Type()&fs.ModeSymlink != 0, e.IsDir()
			if isLink {
				if info, err := os.Stat(p); err == nil && info.IsDir() {
					if confined(root, p, diags) {
						walk(p, depth+1)
					}
					continue
				}
			}
			switch {
			case isDir:
				walk(p, depth+1)
			case IsInput(p):
				files = append(files, p)
				if isLink {
					links[p] = true
				}
			}
		}
	}
	walk(root, 0)
	return files, links
}

// special files are not parsed as YAML: Jsonnet programs and libraries.
func special(file string) bool {
	ext := filepath.Ext(file)
	return ext == ".jsonnet" || ext == ".libsonnet"
}

func relTo(root, file string) string {
	rel, _ := filepath.Rel(root, file)
	return filepath.ToSlash(rel)
}

func (o Options) rel(file, root string) string {
	if o.Base != "" {
		if r, ok := below(o.Base, file); ok {
			return r
		}
	}
	return SourcePath(file, root)
}

// parsedFile is a YAML file read and parsed on its own, with its
// diagnostics kept apart until finish.
type parsedFile struct {
	file  string
	docs  []*Doc
	diags diag.List
	// blank: the file holds nothing but white space.
	blank bool
}

func parseFile(file, rel string) parsedFile {
	p := parsedFile{file: file}
	data, ok := readData(file, &p.diags)
	if !ok {
		return p
	}
	p.docs = Parse(file, rel, data, &p.diags)
	p.blank = len(bytes.TrimSpace(data)) == 0
	return p
}

// finish adds the file's diagnostics to diags and returns its documents.
func (p *parsedFile) finish(diags *diag.List) []*Doc {
	diags.Append(&p.diags)
	if len(p.docs) == 0 && !diags.HasErrors() && p.blank {
		diags.Warnf(diag.Pos{File: p.file}, "", "file is empty")
	}
	return p.docs
}

func readData(file string, diags *diag.List) ([]byte, bool) {
	data, err := ReadFile(file)
	if errors.Is(err, errNotRegular) {
		diags.Errorf(diag.Pos{File: file}, "", "cannot read: not a regular file (a FIFO, socket or device is never read as an input; remove it or rename it to end in other than .yaml, .yml, .json or .jsonnet)")
		return nil, false
	}
	if errors.Is(err, ErrTooLarge) {
		diags.Errorf(diag.Pos{File: file}, "", "file is larger than the %d MiB limit for one input (split it into several files)", MaxFileSize>>20)
		return nil, false
	}
	if err != nil {
		diags.Errorf(diag.Pos{File: file}, "", "cannot read: %v", unwrapPathError(err))
		return nil, false
	}
	return data, true
}

// errNotRegular: the file is a FIFO, socket or device.
var errNotRegular = errors.New("not a regular file")

// ErrTooLarge: the file holds more than MaxFileSize bytes.
var ErrTooLarge = errors.New("larger than the limit for one input")

// ReadFile reads an input file of at most MaxFileSize bytes, never more
// (ErrTooLarge), whatever size it claims: a FIFO, socket or device is
// refused without blocking (errNotRegular), whether it was named, found
// in a directory or reached by a symlink.
func ReadFile(file string) ([]byte, error) {
	f, err := os.OpenFile(file, openFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err == nil && len(data) > MaxFileSize {
		return nil, ErrTooLarge
	}
	return data, err
}

func readFile(file, rel, root string, opts Options, diags *diag.List) []*Doc {
	if filepath.Ext(file) == ".libsonnet" {
		diags.Warnf(diag.Pos{File: file}, "", "Jsonnet library skipped: it is not an input, .jsonnet files that import it are")
		return nil
	}
	if filepath.Ext(file) == ".jsonnet" {
		data, ok := readData(file, diags)
		if !ok {
			return nil
		}
		if opts.Evaluate == nil {
			diags.Errorf(diag.Pos{File: file}, "", "Jsonnet inputs are not enabled here")
			return nil
		}
		return opts.Evaluate(file, rel, root, data, diags)
	}
	p := parseFile(file, rel)
	return p.finish(diags)
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func firstInvalidUTF8(b []byte) (line, col int) {
	line, col = 1, 1
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return line, col
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		b = b[size:]
	}
	return line, col
}

// Describe names a document for messages about the whole object.
func (d *Doc) Describe() string {
	return fmt.Sprintf("%s (document %d)", d.File, d.Index+1)
}
