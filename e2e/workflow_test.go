package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow the test runs.
type workflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Steps []struct {
			Name string            `yaml:"name"`
			ID   string            `yaml:"id"`
			If   string            `yaml:"if"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// TestInitWorkflowPreviews runs the pull-request workflow `virtc init`
// writes (.github/workflows/virtc-diff.yaml) as GitHub Actions runs its
// steps, without network: the checkout is a clone with the base branch's
// history (fetch-depth 0), virtc is this build instead of `go install`,
// and the comment step (GitHub's API) is left out; its body is checked
// instead. The repository's first commit is init's, as written: the first
// pull request on top of it is previewed (issue #47: the base did not
// compile, so every preview exited 2), and a refused change fails the
// check.
func TestInitWorkflowPreviews(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the workflow's steps")
	}
	top := t.TempDir()
	home := t.TempDir()
	gitEnv := []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + filepath.Join(home, "gitconfig"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}
	run := func(dir string, env []string, name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), gitEnv...), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	git := func(dir string, args ...string) {
		t.Helper()
		if out, err := run(dir, nil, "git", args...); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	// The platform team's first commit: init's files, pushed to main.
	work := filepath.Join(top, "work")
	if out, err := run(top, nil, virtcBin(), "init", "--cluster", "east", "--tenant", "shop", work); err != nil {
		t.Fatalf("virtc init: %v\n%s", err, out)
	}
	git(work, "init", "--quiet", "--initial-branch=main")
	git(work, "add", ".")
	git(work, "commit", "--quiet", "-m", "virtc init")
	origin := filepath.Join(top, "origin.git")
	git(top, "init", "--quiet", "--bare", origin)
	git(work, "push", "--quiet", origin, "main")

	var wf workflow
	data, err := os.ReadFile(filepath.Join(work, ".github", "workflows", "virtc-diff.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	job, ok := wf.Jobs["diff"]
	if !ok || len(wf.Jobs) != 1 {
		t.Fatalf("the workflow's jobs are %v, want one: diff", wf.Jobs)
	}

	// pr runs the workflow on a pull request of branch into main, whose
	// change is made by change: the exit code the preview step recorded,
	// the comment's body, and whether the check failed; logs are what each
	// step printed.
	var logs map[string]string
	pr := func(branch string, change func(dir string)) (code, comment string, failed bool) {
		t.Helper()
		git(work, "checkout", "--quiet", "-b", branch, "main")
		change(work)
		git(work, "add", "-A")
		git(work, "commit", "--quiet", "-m", branch)
		git(work, "push", "--quiet", origin, branch)
		// actions/checkout with fetch-depth 0: every branch of origin.
		checkout := filepath.Join(top, "checkout-"+branch)
		git(top, "clone", "--quiet", "--branch", branch, origin, checkout)
		outputs := map[string]map[string]string{}
		logs = map[string]string{}
		bin := filepath.Join(top, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(virtcBin(), filepath.Join(bin, "virtc")); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
		for _, step := range job.Steps {
			switch {
			case step.Uses != "":
				continue // checkout and setup-go: done above
			case strings.Contains(step.Run, "go install"):
				// Network: this build stands for the release it installs.
				if v := wf.Env["VIRTC_VERSION"]; v == "" {
					t.Error("the workflow does not say which virtc release it installs (env VIRTC_VERSION)")
				}
				continue
			case strings.Contains(step.Run, "gh api"):
				continue // GitHub's API: the comment's body is checked below
			}
			if step.If != "" && !stepIf(t, step.If, outputs) {
				continue
			}
			script := expand(t, step.Run, branch, outputs)
			outFile := filepath.Join(top, "output-"+branch+"-"+step.ID)
			env := []string{"GITHUB_OUTPUT=" + outFile, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
			for k, v := range wf.Env {
				env = append(env, k+"="+v)
			}
			out, err := run(checkout, env, "bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
			logs[step.Name] += out
			if err != nil {
				if step.ID == "diff" {
					t.Fatalf("step %q failed: %v\n%s", step.Name, err, out)
				}
				failed = true
				continue
			}
			if step.ID != "" {
				outputs[step.ID] = readOutputs(t, outFile)
			}
		}
		body, err := os.ReadFile(filepath.Join(checkout, "virtc-diff.md"))
		if err != nil {
			t.Fatal(err)
		}
		git(work, "checkout", "--quiet", "main")
		return outputs["diff"]["code"], string(body), failed
	}

	code, comment, failed := pr("add-vm", func(dir string) {
		vm, err := os.ReadFile(filepath.Join(dir, "clusters", "east", "shop", "vm01.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		vm02 := strings.Replace(string(vm), "name: vm01", "name: vm02", 1)
		if err := os.WriteFile(filepath.Join(dir, "clusters", "east", "shop", "vm02.yaml"), []byte(vm02), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	if code != "0" || failed {
		t.Errorf("the first pull request: code %q, check failed %v; want 0 and passed\n%s", code, failed, comment)
	}
	for _, want := range []string{"<!-- virtc-diff -->", "## cluster east", "shop/vm02"} {
		if !strings.Contains(comment, want) {
			t.Errorf("the first pull request's comment lacks %q:\n%s", want, comment)
		}
	}
	if strings.Contains(comment, "does not compile") {
		t.Errorf("the first pull request's preview does not compile:\n%s", comment)
	}
	// The Platform has no approver yet: its warning is an annotation on
	// its line.
	if want := "::warning file=clusters/east/platform.yaml,line=15,col=3,title=virtc::spec.approver: no InstallPlan approver"; !strings.Contains(logs["Annotate the files"], want) {
		t.Errorf("the annotate step printed no %q:\n%s", want, logs["Annotate the files"])
	}

	code, comment, failed = pr("remove-vm", func(dir string) {
		if err := os.Remove(filepath.Join(dir, "clusters", "east", "shop", "vm01.yaml")); err != nil {
			t.Fatal(err)
		}
	})
	if code != "1" || !failed || !strings.Contains(comment, "vm01") {
		t.Errorf("removing a VM that is not retired: code %q, check failed %v; want 1, failed, and the VM named\n%s", code, failed, comment)
	}
}

var exprRe = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expand replaces the workflow expressions a step uses: the pull
// request's base branch and earlier steps' outputs.
func expand(t *testing.T, s, branch string, outputs map[string]map[string]string) string {
	t.Helper()
	return exprRe.ReplaceAllStringFunc(s, func(m string) string {
		e := exprRe.FindStringSubmatch(m)[1]
		switch {
		case e == "github.base_ref":
			return "main"
		case strings.HasPrefix(e, "steps."):
			parts := strings.Split(e, ".")
			if len(parts) == 4 && parts[2] == "outputs" {
				return outputs[parts[1]][parts[3]]
			}
		}
		t.Fatalf("the workflow uses the expression %q, which this test does not know", e)
		return ""
	})
}

// stepIf evaluates the conditions the workflow's steps have: an output
// compared with a literal.
func stepIf(t *testing.T, cond string, outputs map[string]map[string]string) bool {
	t.Helper()
	m := regexp.MustCompile(`^steps\.([\w-]+)\.outputs\.(\w+) (!=|==) '([^']*)'$`).FindStringSubmatch(strings.TrimSpace(cond))
	if m == nil {
		t.Fatalf("the workflow has the condition %q, which this test does not know", cond)
	}
	v := outputs[m[1]][m[2]]
	return (v == m[4]) == (m[3] == "==")
}

// readOutputs reads a GITHUB_OUTPUT file (name=value lines).
func readOutputs(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return out
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}
