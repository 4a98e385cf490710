package fleet_test

import (
	"os"
	"strings"
	"testing"

	"github.com/virtc/virtc/internal/fleet"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func joinFiles(files []fleet.File) string {
	var b strings.Builder
	for _, f := range files {
		b.WriteString("---\n")
		b.Write(f.Data)
	}
	return b.String()
}

// hasVMWithDisks reports whether some VM document has exactly n data disks.
func hasVMWithDisks(all string, n int) bool {
	for _, doc := range strings.Split(all, "---\n") {
		if !strings.Contains(doc, "\nkind: VM\n") {
			continue
		}
		if strings.Count(doc, "    - name: ") == n {
			return true
		}
	}
	return false
}
