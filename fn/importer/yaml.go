package importer

import (
	"bytes"
	"encoding/json"
	"sync"

	yamlv2 "go.yaml.in/yaml/v2"
)

// jsonToYAML is sigs.k8s.io/yaml's JSONToYAML (v1.6.0 yaml.go), which
// writes with yaml.v2 the value yaml.v2 reads from the JSON, without
// yaml.v2 reading the JSON: for JSON that encoding/json wrote (valid
// UTF-8, no duplicate keys) encoding/json reads the same value faster.
// Objects become map[interface{}]interface{} (yaml.v2's mapping type,
// whose keys it sorts when it writes), arrays []interface{}, strings
// (quoted in JSON: yaml.v2 never resolves them) strings, true, false and
// null themselves, and each number the value yaml.v2 resolves its text to
// (int, int64, uint64 or float64: resolveNumber asks yaml.v2). It was a
// sixth of an import's CPU at 10,000 VMs; TestJSONToYAMLIsSigsYAML holds
// it to JSONToYAML.
func jsonToYAML(js []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return yamlv2.Marshal(yamlValue(v))
}

func yamlValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[interface{}]interface{}, len(t))
		for k, x := range t {
			m[k] = yamlValue(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = yamlValue(x)
		}
		return t
	case json.Number:
		return resolveNumber(string(t))
	}
	return v
}

// numbers caches what yaml.v2 reads a number's text as.
var numbers sync.Map

func resolveNumber(text string) any {
	if v, ok := numbers.Load(text); ok {
		return v
	}
	var v any
	if err := yamlv2.Unmarshal([]byte(text), &v); err != nil {
		v = text
	}
	numbers.Store(text, v)
	return v
}
