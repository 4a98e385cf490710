// Package cmp translates the environment of an Argo CD config management
// plugin (CMP v2) into `virtc build` arguments. Argo CD runs the plugin's
// generate command without a shell, so the options cannot be spliced into
// its arguments: virtc reads them from the environment itself.
//
// Every plugin parameter and every plugin environment variable is one
// `virtc build` flag: parameter `catalog` (or env CATALOG, which Argo CD
// passes as ARGOCD_ENV_CATALOG) becomes --catalog. Only the flags of
// Parameters are taken: an Application belongs to whoever may write it,
// and the sidecar serves every Application, so no parameter may write a
// file (--cpuprofile), change what the output is (-o, --help: an empty
// output would be an application Argo CD prunes) or be misspelt and
// ignored.
package cmp

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/virtc/virtc/internal/secret"
)

// Environment variable names of the CMP v2 contract.
const (
	// ParametersEnv holds the Application's plugin parameters as JSON.
	ParametersEnv = "ARGOCD_APP_PARAMETERS"
	// EnvPrefix prefixes the Application's plugin env entries.
	EnvPrefix = "ARGOCD_ENV_"
)

// Parameter is one entry of ARGOCD_APP_PARAMETERS: a name and one of a
// string, an array or a map.
type Parameter struct {
	Name   string            `json:"name"`
	String *string           `json:"string,omitempty"`
	Array  []string          `json:"array,omitempty"`
	Map    map[string]string `json:"map,omitempty"`
}

// Parameters are the build flags an Application may set, as a plugin
// parameter or a plugin env entry (docs/security.md): what selects and
// reads the inputs (each path confined to the repository's copy by the
// build) and what Jsonnet reads. plugin.yaml announces them.
var Parameters = []string{
	"app-projects",
	"as-of",
	"catalog",
	"cluster",
	"ext-str",
	"no-default-catalog",
	"scope",
	"tenant",
	"warnings-configmap",
}

// flagName reports whether s is a build flag's name: lowercase words of
// letters and digits joined by '-', the first starting with a letter
// (^[a-z][a-z0-9]*(-[a-z0-9]+)*$). A byte test, not a regular expression:
// package hit runs this before virtc is initialised (see cache.go).
func flagName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '-' && s[i-1] != '-' && i+1 < len(s):
		default:
			return false
		}
	}
	return true
}

// Args returns the build flags the environment asks for: first those from
// the plugin env (sorted by name), then those from the parameters (in the
// Application's order), so a parameter overrides an env entry of the same
// single-valued flag. environ is in os.Environ form.
func Args(environ []string) ([]string, error) {
	var args, envNames []string
	env := map[string]string{}
	params := ""
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == ParametersEnv:
			params = v
		case strings.HasPrefix(k, EnvPrefix):
			name := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(k, EnvPrefix)), "_", "-")
			if !slices.Contains(Parameters, name) {
				env := quoteName(strings.TrimPrefix(k, EnvPrefix))
				if strings.HasPrefix(env, "(") {
					// Its flag's name is the same bytes, lowercased.
					return nil, fmt.Errorf("plugin env %s is not an option the plugin takes (%s)", env, strings.Join(Parameters, ", "))
				}
				return nil, fmt.Errorf("plugin env %s: %s is not an option the plugin takes (%s)", env, quoteName(name), strings.Join(Parameters, ", "))
			}
			env[name] = v
			envNames = append(envNames, name)
		}
	}
	slices.Sort(envNames)
	for _, name := range envNames {
		args = append(args, "--"+name+"="+env[name])
	}
	if strings.TrimSpace(params) == "" {
		return args, nil
	}
	var ps []Parameter
	if err := json.Unmarshal([]byte(params), &ps); err != nil {
		return nil, fmt.Errorf("%s is not a JSON list of parameters: %v", ParametersEnv, err)
	}
	for _, p := range ps {
		if !slices.Contains(Parameters, p.Name) {
			return nil, fmt.Errorf("plugin parameter %s is not an option the plugin takes (%s)", quoteName(p.Name), strings.Join(Parameters, ", "))
		}
		switch {
		case p.String != nil:
			args = append(args, "--"+p.Name+"="+*p.String)
		case p.Map != nil:
			keys := make([]string, 0, len(p.Map))
			for k := range p.Map {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				args = append(args, "--"+p.Name+"="+k+"="+p.Map[k])
			}
		default:
			for _, v := range p.Array {
				args = append(args, "--"+p.Name+"="+v)
			}
		}
	}
	return args, nil
}

// quoteName is a name from the Application for a message: quoted, and
// cut when it is long or not a flag's name, so that whatever was pasted
// there is not repeated in Argo CD's error.
func quoteName(s string) string {
	if len(s) > 40 || len(secret.Find(s)) > 0 || strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) {
		return fmt.Sprintf("(a name of %d bytes that is not a flag's)", len(s))
	}
	return strconv.Quote(s)
}
