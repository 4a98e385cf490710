package cli

import (
	"strings"
	"testing"
)

// TestFlagErrors: a wrong command or flag is named with the nearest right
// one, and help names flags as the docs do (--name).
func TestFlagErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"biuld"}, ExitUsage, `virtc: unknown command "biuld"; did you mean "build"?`},
		{[]string{"frobnicate"}, ExitUsage, `virtc: unknown command "frobnicate"` + "\n"},
		{[]string{"build", "--catlog", "x"}, ExitUsage, "virtc build: unknown flag --catlog; did you mean --catalog?\nUsage: virtc build"},
		{[]string{"build", "-scpoe", "vms"}, ExitUsage, "virtc build: unknown flag --scpoe; did you mean --scope?"},
		{[]string{"build", "--zzzzzz"}, ExitUsage, "virtc build: unknown flag --zzzzzz (virtc build -h lists its flags)"},
		{[]string{"build", "--catalog"}, ExitUsage, "virtc build: flag --catalog needs a value"},
		{[]string{"version", "-0", "json"}, ExitUsage, "virtc version: unknown flag -0; did you mean -o?"},
		{[]string{"build", "-h"}, ExitOK, "Flags:\n  --app-projects VALUE\n"},
		{[]string{"build", "--help"}, ExitOK, "\n  --catalog VALUE\n    \ta catalog file or directory"},
		{[]string{"build", "-h"}, ExitOK, "\n  --scope string\n"},
		{[]string{"version", "-h"}, ExitOK, "\n  -o string\n"},
	} {
		code, stdout, stderr := runMain(c.args...)
		if code != c.code || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("virtc %s: exit %d, stdout %q, stderr:\n%s\nwant exit %d and %q", strings.Join(c.args, " "), code, stdout, stderr, c.code, c.want)
		}
		if strings.Contains(stderr, "flag provided but not defined") {
			t.Errorf("virtc %s: the flag package's own message:\n%s", strings.Join(c.args, " "), stderr)
		}
	}
}
