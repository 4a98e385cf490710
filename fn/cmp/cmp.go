// Package cmp translates the environment of an Argo CD config management
// plugin (CMP v2) into `virtc build` arguments. Argo CD runs the plugin's
// generate command without a shell, so the options cannot be spliced into
// its arguments: virtc reads them from the environment itself.
//
// Every plugin parameter and every plugin environment variable is one
// `virtc build` flag: parameter `catalog` (or env CATALOG, which Argo CD
// passes as ARGOCD_ENV_CATALOG) becomes --catalog. A flag that build does
// not know fails the build, so a misspelt option is never ignored.
package cmp

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/virtc/virtc/fn/krm"
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

var flagName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`) })

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
			if !flagName().MatchString(name) {
				return nil, fmt.Errorf("plugin env %s: %q is not a virtc build flag name", strings.TrimPrefix(k, EnvPrefix), name)
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
		if !flagName().MatchString(p.Name) {
			return nil, fmt.Errorf("plugin parameter %q is not a virtc build flag name (lowercase words joined by '-')", p.Name)
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

// MarkerFile marks a directory as a virtc application for the plugin's
// discovery. A Compiler document in it sets the directory's options; being
// a YAML file beside the intents, `virtc build .` reads it too and skips
// the Compiler.
const MarkerFile = "virtc.yaml"

// SpecArgs returns the build flags and input paths a Compiler spec stands
// for. No paths means the app directory itself.
func SpecArgs(s krm.Spec) (flags, paths []string) {
	for _, c := range s.CatalogDirs {
		flags = append(flags, "--catalog="+c)
	}
	if s.NoDefaultCatalog {
		flags = append(flags, "--no-default-catalog")
	}
	if s.Scope != "" {
		flags = append(flags, "--scope="+s.Scope)
	}
	if s.Tenant != "" {
		flags = append(flags, "--tenant="+s.Tenant)
	}
	for _, k := range slices.Sorted(maps.Keys(s.ExtStr)) {
		flags = append(flags, "--ext-str="+k+"="+s.ExtStr[k])
	}
	if s.WarningsConfigMap != "" {
		flags = append(flags, "--warnings-configmap="+s.WarningsConfigMap)
	}
	return flags, s.Paths
}
