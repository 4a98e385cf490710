// Package golden runs every scenario folder under golden/: the folder's
// files are the inputs of `virtc build`; expected.yaml is the output it must
// print, or errors.txt the diagnostics it must print (and nothing on
// stdout). A scenario with a command file runs that command instead (with
// its old/ and new/ folders as two paths, for diff): exit holds its exit
// code, expected.txt its stdout, errors.txt or warnings.txt its stderr.
// A scenario may give the command a stdin: the file stdin as it is, or the
// ResourceList or other JSON that stdin.jsonnet evaluates to (for inputs
// too repetitive to commit, such as a fleet). For the KRM function (command
// fn), expected.txt holds the output ResourceList's item count and its
// results rather than the items themselves, which are the inputs written
// back (and the generated objects, which build scenarios cover).
// `go test ./golden -update` rewrites them.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-jsonnet"
	"go.yaml.in/yaml/v3"

	"github.com/virtc/virtc/internal/cli"
	"github.com/virtc/virtc/internal/source"
	"github.com/virtc/virtc/test/conform"
)

var update = flag.Bool("update", false, "rewrite expected.yaml, errors.txt and warnings.txt from the current output")

// Files of a scenario that are not inputs.
const (
	expectedFile = "expected.yaml"
	errorsFile   = "errors.txt"
	warningsFile = "warnings.txt"
	// flagsFile holds extra command-line flags, one line, for example
	// "--scope vms".
	flagsFile = "flags"
	// commandFile names another command than build (for example diff).
	commandFile = "command"
	// expectedTextFile is the stdout of a command other than build (which
	// is not YAML, so cannot be expected.yaml).
	expectedTextFile = "expected.txt"
	// exitFile holds the exit code a scenario must end with, for commands
	// whose codes mean more than success or failure (diff: 0 allowed, 1
	// refused, 2 error).
	exitFile = "exit"
	// readmeFile says what a scenario shows, for people.
	readmeFile = "README"
	// appProjectsDir holds a scenario's Argo CD AppProjects: not inputs,
	// given to build as --app-projects.
	appProjectsDir = "argocd"
	// stdinFile is the command's stdin; stdinJsonnetFile evaluates to it.
	stdinFile        = "stdin"
	stdinJsonnetFile = "stdin.jsonnet"
)

// Scenarios lists the scenario folders.
func Scenarios(t testing.TB) []string {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Name() != "testdata" && e.Name() != importDir && e.Name() != initDir {
			out = append(out, e.Name())
		}
	}
	return out
}

func readOptional(t *testing.T, path string) (string, bool) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data), true
}

// Run runs one scenario's command and returns exit code, stdout, stderr.
// virtc.dev/source paths are relative to the scenario's folder
// ($VIRTC_SOURCE_BASE), so the output is the same whether the repository
// is a git checkout or not, and wherever it lives.
func Run(t *testing.T, dir string) (int, string, string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(source.BaseEnv, abs)
	command := "build"
	if c, ok := readOptional(t, filepath.Join(dir, commandFile)); ok {
		command = strings.TrimSpace(c)
	}
	args := []string{command}
	if f, ok := readOptional(t, filepath.Join(dir, flagsFile)); ok {
		args = append(args, strings.Fields(f)...)
	}
	if _, err := os.Stat(filepath.Join(dir, appProjectsDir)); err == nil {
		args = append(args, "--app-projects", filepath.Join(dir, appProjectsDir))
	}
	args = append(args, inputs(t, dir)...)
	var stdout, stderr bytes.Buffer
	code := cli.Main(args, strings.NewReader(stdin(t, dir)), &stdout, &stderr)
	if command == "fn" {
		return code, resultsOf(t, stdout.String()), stderr.String()
	}
	return code, stdout.String(), stderr.String()
}

// stdin is the scenario's stdin: the stdin file, or what stdin.jsonnet
// evaluates to, or nothing.
func stdin(t *testing.T, dir string) string {
	if s, ok := readOptional(t, filepath.Join(dir, stdinFile)); ok {
		return s
	}
	src, ok := readOptional(t, filepath.Join(dir, stdinJsonnetFile))
	if !ok {
		return ""
	}
	out, err := jsonnet.MakeVM().EvaluateAnonymousSnippet(filepath.Join(dir, stdinJsonnetFile), src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// resultsOf reduces the KRM function's output ResourceList to its item
// count and results.
func resultsOf(t *testing.T, stdout string) string {
	var rl struct {
		Items   []any `yaml:"items"`
		Results any   `yaml:"results"`
	}
	if err := yaml.Unmarshal([]byte(stdout), &rl); err != nil {
		t.Fatalf("the output is not a ResourceList: %v\n%s", err, stdout)
	}
	out, err := yaml.Marshal(map[string]any{"items": len(rl.Items), "results": rl.Results})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// inputs are the scenario's files and folders, except the golden outputs
// and control files; for two-tree commands, its old/ and new/ folders.
func inputs(t *testing.T, dir string) []string {
	if _, err := os.Stat(filepath.Join(dir, "old")); err == nil {
		return []string{filepath.Join(dir, "old"), filepath.Join(dir, "new")}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		switch e.Name() {
		case expectedFile, errorsFile, warningsFile, flagsFile, commandFile, expectedTextFile, exitFile, readmeFile, stdinFile, stdinJsonnetFile, appProjectsDir:
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

func TestGolden(t *testing.T) {
	// The expected outputs judge evidence as the inputs say (a flags file's
	// --as-of, else the newest Evidence), never as the environment's
	// reproducible-builds date would.
	t.Setenv("SOURCE_DATE_EPOCH", "")
	scenarios := Scenarios(t)
	if len(scenarios) == 0 {
		t.Fatal("no scenarios")
	}
	for _, name := range scenarios {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := Run(t, name)
			_, wantErrors := readOptional(t, filepath.Join(name, errorsFile))
			if isDiffScenario(name) {
				if *update {
					writeCommandGolden(t, name, code, stdout, stderr)
					return
				}
				checkCommand(t, name, code, stdout, stderr)
				return
			}
			if *update {
				writeGolden(t, name, code, stdout, stderr, wantErrors)
				return
			}
			check(t, name, code, stdout, stderr)
		})
	}
}

func writeGolden(t *testing.T, dir string, code int, stdout, stderr string, wantErrors bool) {
	write := func(file, content string) { writeOrRemove(t, filepath.Join(dir, file), content) }
	if code == 0 && !wantErrors {
		write(expectedFile, stdout)
		write(warningsFile, stderr)
		write(errorsFile, "")
		return
	}
	write(errorsFile, stderr)
	write(expectedFile, stdout)
	write(warningsFile, "")
}

// writeOrRemove writes a golden file, or removes it when it would be empty.
func writeOrRemove(t *testing.T, path, content string) {
	t.Helper()
	if content == "" {
		os.Remove(path)
		return
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeCommandGolden records a non-build command's exit code, stdout and
// stderr (errors.txt when it failed, warnings.txt otherwise).
func writeCommandGolden(t *testing.T, dir string, code int, stdout, stderr string) {
	write := func(file, content string) { writeOrRemove(t, filepath.Join(dir, file), content) }
	write(exitFile, strconv.Itoa(code)+"\n")
	write(expectedTextFile, stdout)
	if code == 0 {
		write(warningsFile, stderr)
		write(errorsFile, "")
	} else {
		write(errorsFile, stderr)
		write(warningsFile, "")
	}
}

// checkCommand compares a non-build command's exit code with exit,
// stdout with expected.txt and stderr with errors.txt or warnings.txt
// (absent files mean empty output).
func checkCommand(t *testing.T, dir string, code int, stdout, stderr string) {
	c, ok := readOptional(t, filepath.Join(dir, exitFile))
	if !ok {
		t.Fatalf("scenario has no %s file (run go test ./golden -update)", exitFile)
	}
	want, err := strconv.Atoi(strings.TrimSpace(c))
	if err != nil {
		t.Fatalf("%s: %v", exitFile, err)
	}
	if code != want {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, want, stderr)
	}
	wantOut, _ := readOptional(t, filepath.Join(dir, expectedTextFile))
	if diff := cmp.Diff(wantOut, stdout); diff != "" {
		t.Errorf("stdout differs from %s (-want +got):\n%s", expectedTextFile, diff)
	}
	stderrFile := warningsFile
	if code != 0 {
		stderrFile = errorsFile
	}
	wantErr, _ := readOptional(t, filepath.Join(dir, stderrFile))
	if diff := cmp.Diff(wantErr, stderr); diff != "" {
		t.Errorf("stderr differs from %s (-want +got):\n%s", stderrFile, diff)
	}
}

func check(t *testing.T, dir string, code int, stdout, stderr string) {
	if wantErr, ok := readOptional(t, filepath.Join(dir, errorsFile)); ok {
		if code == 0 {
			t.Errorf("exit code 0, want non-zero (errors.txt exists)")
		}
		if command, _ := readOptional(t, filepath.Join(dir, commandFile)); strings.TrimSpace(command) == "" || strings.TrimSpace(command) == "build" {
			if stdout != "" {
				t.Errorf("a failing build printed %d bytes on stdout; it must print nothing", len(stdout))
			}
		}
		if diff := cmp.Diff(wantErr, stderr); diff != "" {
			t.Errorf("stderr differs from %s (-want +got):\n%s", errorsFile, diff)
		}
		if want, ok := readOptional(t, filepath.Join(dir, expectedFile)); ok {
			if diff := cmp.Diff(want, stdout); diff != "" {
				t.Errorf("stdout differs from %s (-want +got):\n%s", expectedFile, diff)
			}
		}
		return
	}
	want, ok := readOptional(t, filepath.Join(dir, expectedFile))
	if !ok {
		t.Fatalf("scenario has neither %s nor %s (run go test ./golden -update)", expectedFile, errorsFile)
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", code, stderr)
	}
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout differs from %s (-want +got):\n%s", expectedFile, diff)
	}
	wantWarn, _ := readOptional(t, filepath.Join(dir, warningsFile))
	if diff := cmp.Diff(wantWarn, stderr); diff != "" {
		t.Errorf("stderr differs from %s (-want +got):\n%s", warningsFile, diff)
	}
}

// TestExpectedDecodeStrictly decodes every expected.yaml into the real API
// types: a misspelled or unknown field fails here.
func TestExpectedDecodeStrictly(t *testing.T) {
	for _, name := range Scenarios(t) {
		data, ok := readOptional(t, filepath.Join(name, expectedFile))
		if !ok || isDiffScenario(name) {
			continue
		}
		for _, err := range conform.Strict([]byte(data)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// isDiffScenario reports scenarios whose expected output is not manifests.
func isDiffScenario(name string) bool {
	c, err := os.ReadFile(filepath.Join(name, commandFile))
	if err != nil {
		return false
	}
	switch strings.TrimSpace(string(c)) {
	case "build":
		return false
	case "restore-plan":
		// A plan's objects are YAML; the plan itself is a script.
		return !objectsScenario(name)
	}
	return true
}

// objectsScenario reports a restore-plan scenario that prints only the
// plan's objects (--objects), which are YAML.
func objectsScenario(name string) bool {
	f, err := os.ReadFile(filepath.Join(name, flagsFile))
	return err == nil && slices.Contains(strings.Fields(string(f)), "--objects")
}

// TestExpectedKubeconform validates every expected.yaml with kubeconform
// -strict against the upstream schemas: an output that installs a platform
// against that platform version's, the others against 4.20, 4.21 and 4.22.
func TestExpectedKubeconform(t *testing.T) {
	byVersion := map[string][]string{}
	for _, name := range Scenarios(t) {
		path := filepath.Join(name, expectedFile)
		data, err := os.ReadFile(path)
		if err != nil || isDiffScenario(name) {
			continue
		}
		if m := platformCSV.FindSubmatch(data); m != nil {
			byVersion[string(m[1])] = append(byVersion[string(m[1])], path)
			continue
		}
		for _, v := range []string{"4.20", "4.21", "4.22"} {
			byVersion[v] = append(byVersion[v], path)
		}
	}
	for _, version := range []string{"4.20", "4.21", "4.22"} {
		t.Run(version, func(t *testing.T) { conform.RunKubeconform(t, version, byVersion[version]...) })
	}
}

// platformCSV finds the OpenShift Virtualization version an output installs.
var platformCSV = regexp.MustCompile(`startingCSV: kubevirt-hyperconverged-operator\.v([0-9]+\.[0-9]+)\.`)
