package cmp

import (
	"slices"
	"strings"
	"testing"
)

func TestArgs(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"ARGOCD_APP_NAME=east",
		"ARGOCD_ENV_NO_DEFAULT_CATALOG=true",
		"ARGOCD_ENV_CATALOG=../shared",
		`ARGOCD_APP_PARAMETERS=[{"name":"catalog","array":["../a","../b"]},{"name":"ext-str","map":{"zone":"b","env":"prod"}},{"name":"no-default-catalog","string":"false"}]`,
		// Argo CD's per-parameter variables repeat ARGOCD_APP_PARAMETERS
		// and must not count twice.
		"PARAM_CATALOG_0=../a",
	}
	got, err := Args(env)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"--catalog=../shared", "--no-default-catalog=true",
		"--catalog=../a", "--catalog=../b",
		"--ext-str=env=prod", "--ext-str=zone=b",
		"--no-default-catalog=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestArgsErrors(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{`ARGOCD_APP_PARAMETERS={"name":"x"}`, "is not a JSON list of parameters"},
		{`ARGOCD_APP_PARAMETERS=[{"name":"Catalog","string":"x"}]`, `plugin parameter "Catalog" is not an option the plugin takes (app-projects, as-of, catalog,`},
		{`ARGOCD_APP_PARAMETERS=[{"name":"--catalog","string":"x"}]`, "is not an option the plugin takes"},
		{"ARGOCD_ENV_9LIVES=x", `plugin env "9LIVES": "9lives" is not an option the plugin takes`},
		// What writes files or changes the exit contract (docs/security.md).
		{`ARGOCD_APP_PARAMETERS=[{"name":"cpuprofile","string":"/tmp/x"}]`, `plugin parameter "cpuprofile" is not an option`},
		{"ARGOCD_ENV_MEMPROFILE=/tmp/x", `plugin env "MEMPROFILE": "memprofile" is not an option`},
		{"ARGOCD_ENV_AKIAIOSFODNN7EXAMPLE=x", `plugin env (a name of 20 bytes that is not a flag's) is not an option`},
		{`ARGOCD_APP_PARAMETERS=[{"name":"help","string":"true"}]`, `plugin parameter "help" is not an option`},
		{`ARGOCD_APP_PARAMETERS=[{"name":"o","string":"json"}]`, `plugin parameter "o" is not an option`},
		{`ARGOCD_APP_PARAMETERS=[{"name":"diagnostics","string":"json"}]`, `plugin parameter "diagnostics" is not an option`},
		// A name is not repeated when it could be anything pasted there.
		{`ARGOCD_APP_PARAMETERS=[{"name":"ghp_0123456789abcdefghij0123456789abcdef","string":"x"}]`, `plugin parameter (a name of 40 bytes that is not a flag's)`},
		{`ARGOCD_APP_PARAMETERS=[{"name":"a b","string":"x"}]`, "(a name of 3 bytes that is not a flag's)"},
	} {
		if _, err := Args([]string{tc.env}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.env, err, tc.want)
		}
	}
}

func TestNoParameters(t *testing.T) {
	for _, v := range []string{"", "[]", "null"} {
		got, err := Args([]string{"ARGOCD_APP_PARAMETERS=" + v})
		if err != nil || len(got) != 0 {
			t.Errorf("%q: got %q, %v; want no flags", v, got, err)
		}
	}
}
