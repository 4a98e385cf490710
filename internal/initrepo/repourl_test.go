package initrepo

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A repository URL that is not one is refused: a line break would add
// fields of its own to the ApplicationSet and the AppProjects, which Argo
// CD applies with its own rights.
func TestFilesRefuseRepoURLThatIsNot(t *testing.T) {
	for _, u := range []string{
		"https://x\n  evil: true",
		"https://git.example.com/platform/virtual machines.git",
		"https://x\r\nevil: true",
		"https://git.example.com/a.git\t",
		"",
		"git.example.com/platform/vms.git",
		"https:///platform/vms.git",
		"-c/evil",
	} {
		if _, err := Files(Options{Cluster: "east", Tenants: []string{"shop"}, RepoURL: u}); err == nil {
			t.Errorf("repo URL %q: no error", u)
		}
		if err := CheckRepoURL(u); err == nil || !strings.Contains(err.Error(), "want") {
			t.Errorf("CheckRepoURL(%q) = %v, want an error that says what would be right", u, err)
		}
	}
}

// A valid URL, in either form Argo CD clones from, is every repoURL and
// sourceRepos entry of the files, read as YAML.
func TestFilesWriteRepoURLAsYAMLString(t *testing.T) {
	for _, u := range []string{
		"https://git.example.com/platform/virtual-machines.git",
		"git@git.example.com:platform/virtual-machines.git",
		"ssh://git@git.example.com:2222/platform/vms.git",
		"https://git.example.com/platform/vms.git#main",
		"https://user:p%40ss@git.example.com/it's/vms.git?x=1&y=[2]",
	} {
		if err := CheckRepoURL(u); err != nil {
			t.Errorf("CheckRepoURL(%q): %v", u, err)
			continue
		}
		files, err := Files(Options{Cluster: "east", Tenants: []string{"shop", "web"}, RepoURL: u})
		if err != nil {
			t.Fatalf("%q: %v", u, err)
		}
		found := 0
		for _, f := range files {
			if f.Path != "argocd/applicationset.yaml" && f.Path != "argocd/projects.yaml" {
				continue
			}
			dec := yaml.NewDecoder(bytes.NewReader(f.Data))
			for {
				var doc yaml.Node
				if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
					break
				} else if err != nil {
					t.Fatalf("%q: %s is not YAML: %v\n%s", u, f.Path, err, f.Data)
				}
				for _, got := range repoURLs(&doc, "") {
					found++
					if got != u {
						t.Errorf("%s: repo URL %q, want %q", f.Path, got, u)
					}
				}
			}
		}
		// 4 in the ApplicationSet, one per AppProject.
		if found != 4+3 {
			t.Errorf("%q: %d repo URLs in the Argo CD files, want 7", u, found)
		}
	}
}

// repoURLs are the values of every repoURL key and sourceRepos item under n.
func repoURLs(n *yaml.Node, key string) []string {
	var out []string
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			out = append(out, repoURLs(c, "")...)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			out = append(out, repoURLs(n.Content[i+1], n.Content[i].Value)...)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			out = append(out, repoURLs(c, key)...)
		}
	case yaml.ScalarNode:
		if key == "repoURL" || key == "sourceRepos" {
			out = append(out, n.Value)
		}
	}
	return out
}

// yamlString reads back as its string whatever the string holds, and
// leaves an ordinary URL unquoted (the example's files stay as they are).
func TestYAMLString(t *testing.T) {
	plain := "https://git.example.com/platform/virtual-machines.git"
	if got := yamlString(plain); got != plain {
		t.Errorf("yamlString(%q) = %s, want it unquoted", plain, got)
	}
	for _, s := range []string{plain, "git@h:p.git", "a\n  evil: true", "x: y", "a #b", "'", `"`, "true", "1e3", "null", "~", "-", "- x", "[a]", "{a: b}", "*a", "&a", "!x", "%x", "@x", "|", ">", "", "\t", "é\u2028"} {
		var v struct{ V string }
		if err := yaml.Unmarshal([]byte("v: "+yamlString(s)), &v); err != nil || v.V != s {
			t.Errorf("yamlString(%q) = %s reads back as %q (%v)", s, yamlString(s), v.V, err)
		}
		var seq []string
		if err := yaml.Unmarshal([]byte("- "+yamlString(s)), &seq); err != nil || len(seq) != 1 || seq[0] != s {
			t.Errorf("yamlString(%q) = %s in a list reads back as %q (%v)", s, yamlString(s), seq, err)
		}
	}
}
