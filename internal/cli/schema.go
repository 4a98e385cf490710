package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/virtc/virtc/internal/decode"
	"github.com/virtc/virtc/internal/diag"
	"github.com/virtc/virtc/internal/schema"
	"github.com/virtc/virtc/schemas"
)

// runSchema prints the JSON Schema of a kind, or of any virtc object.
func runSchema(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("schema", "[KIND]", stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: virtc schema [KIND]\n\nPrints the JSON Schema (draft-07) of KIND (%s), or without KIND the\nschema of any virtc object.\n", strings.Join(decode.Kinds, ", "))
	}
	rest, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	file := schema.AllFile
	switch len(rest) {
	case 0:
	case 1:
		kind, ok := kindNamed("schema", rest[0], stderr)
		if !ok {
			return ExitUsage
		}
		file = schema.FileName(kind)
	default:
		fs.Usage()
		return ExitUsage
	}
	data, err := schemas.Files.ReadFile(file)
	if err != nil {
		fmt.Fprintf(stderr, "virtc schema: %v\n", err)
		return ExitFailed
	}
	if _, err := stdout.Write(data); err != nil {
		fmt.Fprintf(stderr, "virtc: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}

// kindNamed is the virtc kind a command line names, in any case; else it
// reports the nearest kinds as command's error.
func kindNamed(command, name string, stderr io.Writer) (string, bool) {
	for _, k := range decode.Kinds {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	fmt.Fprintf(stderr, "virtc %s: %s\n", command, diag.UnknownName("kind", name, decode.Kinds))
	return "", false
}
