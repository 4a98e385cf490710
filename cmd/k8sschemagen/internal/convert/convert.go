// Package convert turns definitions of the Kubernetes OpenAPI (v2) into
// kubeconform's strict stand-alone JSON Schemas (see cmd/k8sschemagen).
package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Definitions are the swagger document's definitions, by title.
type Definitions map[string]any

// ReadDefinitions reads a swagger.json's definitions.
func ReadDefinitions(path string) (Definitions, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Definitions Definitions `json:"definitions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return doc.Definitions, nil
}

const (
	intOrString = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
	quantity    = "io.k8s.apimachinery.pkg.api.resource.Quantity"
)

// FileName is the schema file of a definition title, as kubeconform's
// {{.ResourceKind}}{{.KindSuffix}}.json names it: kind-group-version,
// kind-version for the core group.
func FileName(title string) string {
	parts := strings.Split(title, ".")
	kind := strings.ToLower(parts[len(parts)-1])
	version := strings.ToLower(parts[len(parts)-2])
	group := strings.ToLower(parts[len(parts)-3])
	if group == "core" || group == "api" {
		return kind + "-" + version + ".json"
	}
	return kind + "-" + group + "-" + version + ".json"
}

// Schema converts one definition; it returns the file name and content.
func Schema(defs Definitions, title string) (string, []byte, error) {
	raw, ok := defs[title]
	if !ok {
		return "", nil, fmt.Errorf("no definition %s", title)
	}
	spec, err := inline(defs, deepCopy(raw), nil)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", title, err)
	}
	root := spec.(map[string]any)
	root["$schema"] = "http://json-schema.org/schema#"
	if _, ok := root["type"]; !ok {
		root["type"] = "object"
	}
	root["additionalProperties"] = false
	if props, ok := root["properties"].(map[string]any); ok {
		strict(props)
		props = replaceIntOrString(props).(map[string]any)
		props = allowNull(props, nil, nil, "").(map[string]any)
		root["properties"] = props
		if gvks, ok := root["x-kubernetes-group-version-kind"].([]any); ok && len(gvks) == 1 {
			gvk := gvks[0].(map[string]any)
			apiVersion := gvk["version"].(string)
			if g := gvk["group"].(string); g != "" {
				apiVersion = g + "/" + apiVersion
			}
			if p, ok := props["apiVersion"].(map[string]any); ok {
				p["enum"] = []any{apiVersion}
			}
			if p, ok := props["kind"].(map[string]any); ok {
				p["enum"] = []any{gvk["kind"]}
			}
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return "", nil, err
	}
	return FileName(title), buf.Bytes(), nil
}

// inline replaces every {"$ref": "#/definitions/X"} with a copy of X
// (itself inlined); quantities become a string or a number.
func inline(defs Definitions, v any, seen []string) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok {
			title := strings.TrimPrefix(ref, "#/definitions/")
			for _, s := range seen {
				if s == title {
					return nil, fmt.Errorf("recursive reference %s", title)
				}
			}
			if title == quantity {
				return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}, nil
			}
			def, ok := defs[title]
			if !ok {
				return nil, fmt.Errorf("unknown reference %s", ref)
			}
			return inline(defs, deepCopy(def), append(seen, title))
		}
		for k, x := range v {
			y, err := inline(defs, x, seen)
			if err != nil {
				return nil, err
			}
			v[k] = y
		}
		return v, nil
	case []any:
		for i, x := range v {
			y, err := inline(defs, x, seen)
			if err != nil {
				return nil, err
			}
			v[i] = y
		}
		return v, nil
	}
	return v, nil
}

// strict sets additionalProperties false on every object below with
// properties and no additionalProperties.
func strict(v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if m, ok := x.(map[string]any); ok {
				if _, ok := m["properties"]; ok {
					if _, ok := m["additionalProperties"]; !ok {
						m["additionalProperties"] = false
					}
				}
				strict(m)
			}
		}
	}
}

// replaceIntOrString turns every schema of format int-or-string into a
// oneOf of a string and an integer.
func replaceIntOrString(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if m, ok := x.(map[string]any); ok && m["format"] == "int-or-string" {
				out[k] = map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
				continue
			}
			out[k] = replaceIntOrString(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = replaceIntOrString(x)
		}
		return out
	}
	return v
}

// allowNull makes a type nullable ([type, "null"]) unless the field is
// required: a "type" string in a schema reached as key of a map whose
// parent lists key in its "required".
func allowNull(v, parent, grandParent any, key string) any {
	data, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for k, x := range data {
		switch x := x.(type) {
		case map[string]any:
			out[k] = allowNull(x, data, parent, k)
		case []any:
			list := make([]any, len(x))
			for i, e := range x {
				list[i] = allowNull(e, x, parent, k)
			}
			out[k] = list
		case string:
			out[k] = x
			if k == "type" && x != "null" && !required(grandParent, key) {
				out[k] = []any{x, "null"}
			}
		default:
			out[k] = x
		}
	}
	return out
}

func required(grandParent any, key string) bool {
	m, ok := grandParent.(map[string]any)
	if !ok {
		return false
	}
	req, _ := m["required"].([]any)
	for _, r := range req {
		if r == key {
			return true
		}
	}
	return false
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
