package emit

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The byte tests of needsQuotes agree with the regular expressions they
// replace on every string of up to four characters from the alphabet that
// matters to YAML numbers, timestamps and plain scalars.
func TestNeedsQuotesMatchesRegexps(t *testing.T) {
	const alphabet = "09.-+:_ #eExXoObBiInNfFaA/z~\xff"
	var rec func(prefix string, n int)
	count := 0
	rec = func(prefix string, n int) {
		if got, want := needsQuotes(prefix), refNeedsQuotes(prefix); got != want {
			t.Errorf("needsQuotes(%q) = %v, regexps say %v", prefix, got, want)
		}
		count++
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			rec(prefix+alphabet[i:i+1], n-1)
		}
	}
	rec("", 4)
	for _, s := range []string{"2026-12-01", "2026-1-1", "2026-123-4", "2026-12-0x", "1_000", "0x1F", "0o17", "0b101", "12:30:45", "1.5e10",
		"-.inf", ".NaN", "+12", "4.22.3", "1.2.3.4", "1..2", "1.2.", ".1.2", "4.22", "0E_0", "0_X000", "1e+5", "1e-5", "2-1", "10.0.0.0/16", "40Gi", "8a1d4b5e-3c2f-5e0a-9b7d-6f4e2c1a0b3d", "0.055", "1e3", "yes", "No", "null", "~", "true"} {
		if got, want := needsQuotes(s), refNeedsQuotes(s); got != want {
			t.Errorf("needsQuotes(%q) = %v, regexps say %v", s, got, want)
		}
	}
	if count < 100000 {
		t.Fatalf("only %d strings checked", count)
	}
}

func FuzzNeedsQuotes(f *testing.F) {
	for _, s := range []string{"a", "1", "0x1f", "2026-01-01", ".inf", "1:20", "a: b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := needsQuotes(s), refNeedsQuotes(s); got != want {
			t.Fatalf("needsQuotes(%q) = %v, regexps say %v", s, got, want)
		}
	})
}

// Types that exercise encoding/json's rules.
type (
	inner struct {
		A string `json:"a"`
		B int    `json:"b,omitempty"`
	}
	recursive struct {
		Name     string      `json:"name"`
		Next     *recursive  `json:"next,omitempty"`
		Children []recursive `json:"children"`
	}
	Embedded struct {
		E1 string `json:"e1"`
		// Shadowed by the outer Name.
		Name string `json:"name"`
	}
	EmbeddedPtr struct {
		P1 string `json:"p1,omitempty"`
	}
	Tagged struct {
		T1 string `json:"t1"`
	}
	// Untagged fields of one name at one depth annihilate each other.
	conflictA struct {
		Same string
	}
	conflictB struct {
		Same string
	}
	zeroer        struct{ v int }
	ptrZeroer     struct{ v int }
	textKey       int
	marshalObject struct{}
	marshalArray  struct{}
	marshalNumber struct{}
	marshalEscape struct{}
	marshalSpaced struct{}
	marshalNull   struct{}
	marshalFails  struct{}
	textThing     struct{ s string }
	ptrMarshaler  struct{ s string }

	everything struct {
		Embedded
		*EmbeddedPtr
		Tagged `json:"tagged"`
		conflictA
		conflictB
		Name       string            `json:"name"`
		Empty      string            `json:"empty"`
		OmitStr    string            `json:"omitStr,omitempty"`
		OmitInt    int               `json:"omitInt,omitempty"`
		OmitBool   bool              `json:"omitBool,omitempty"`
		OmitPtr    *int              `json:"omitPtr,omitempty"`
		OmitSlice  []string          `json:"omitSlice,omitempty"`
		OmitMap    map[string]int    `json:"omitMap,omitempty"`
		OmitStruct inner             `json:"omitStruct,omitempty"`
		ZeroStruct inner             `json:"zeroStruct,omitzero"`
		ZeroTime   metav1.Time       `json:"zeroTime,omitzero"`
		Zeroer     zeroer            `json:"zeroer,omitzero"`
		PtrZeroer  ptrZeroer         `json:"ptrZeroer,omitzero"`
		NilSlice   []string          `json:"nilSlice"`
		EmptySlice []string          `json:"emptySlice"`
		NilMap     map[string]string `json:"nilMap"`
		EmptyMap   map[string]string `json:"emptyMap"`
		Bytes      []byte            `json:"bytes"`
		NilBytes   []byte            `json:"nilBytes"`
		Array      [3]int            `json:"array"`
		IntKeys    map[int]string    `json:"intKeys"`
		TextKeys   map[textKey]int   `json:"textKeys"`
		Quoted     int               `json:"quoted,string"`
		QuotedStr  string            `json:"quotedStr,string"`
		QuotedBool *bool             `json:"quotedBool,string"`
		Float      float64           `json:"float"`
		NegZero    float64           `json:"negZero,omitempty"`
		OmitFloat  float64           `json:"omitFloat,omitempty"`
		OmitUint   uint              `json:"omitUint,omitempty"`
		OmitArray  [0]int            `json:"omitArray,omitempty"`
		Small      float64           `json:"small"`
		Large      float64           `json:"large"`
		Float32    float32           `json:"float32"`
		Number     json.Number       `json:"number"`
		NoNumber   json.Number       `json:"noNumber"`
		Invalid    string            `json:"invalid"`
		Multiline  string            `json:"multiline"`
		Untagged   string
		unexported string
		Skipped    string                  `json:"-"`
		Dash       string                  `json:"-,"`
		BadTag     string                  `json:"b\"ad"`
		Lists      [][]any                 `json:"lists"`
		Any        any                     `json:"any"`
		AnyMap     map[string]any          `json:"anyMap"`
		Object     marshalObject           `json:"object"`
		ArrayM     marshalArray            `json:"arrayM"`
		NumberM    marshalNumber           `json:"numberM"`
		Escape     marshalEscape           `json:"escape"`
		Spaced     marshalSpaced           `json:"spaced"`
		NullM      marshalNull             `json:"nullM"`
		Text       textThing               `json:"text"`
		PtrM       ptrMarshaler            `json:"ptrM"`
		PtrMs      []ptrMarshaler          `json:"ptrMs"`
		PtrMap     map[string]ptrMarshaler `json:"ptrMap"`
		Quantity   resource.Quantity       `json:"quantity"`
		IntOrStr   intstr.IntOrString      `json:"intOrStr"`
		Duration   metav1.Duration         `json:"duration"`
		Meta       metav1.ObjectMeta       `json:"metadata"`
		Spec       struct {
			Resources struct {
				Status struct{} `json:"status"`
			} `json:"resources"`
		} `json:"spec"`
		Items  []metav1.ObjectMeta `json:"items"`
		Status struct {
			Ready bool `json:"ready"`
		} `json:"status"`
		Nested struct {
			Status inner `json:"status"`
			Meta   inner `json:"metadata,omitempty"`
		} `json:"nested"`
	}
)

func (z zeroer) IsZero() bool     { return z.v == 7 }
func (z *ptrZeroer) IsZero() bool { return z.v == 0 }
func (k textKey) MarshalText() ([]byte, error) {
	return []byte("key-" + string(rune('a'+int(k)))), nil
}
func (marshalObject) MarshalJSON() ([]byte, error) {
	return []byte(`{"z": 1, "a": {"status": {}, "metadata": {}, "keep": {}}, "creationTimestamp": null, "l": [1, "x", {}]}`), nil
}
func (marshalArray) MarshalJSON() ([]byte, error)  { return []byte(`[1.50, "two", null, [3]]`), nil }
func (marshalNumber) MarshalJSON() ([]byte, error) { return []byte(`1e+400`), nil }
func (marshalEscape) MarshalJSON() ([]byte, error) { return []byte(`"a\"b\u00e9\n"`), nil }
func (marshalSpaced) MarshalJSON() ([]byte, error) { return []byte(" \"spaced\" \n"), nil }
func (marshalNull) MarshalJSON() ([]byte, error)   { return []byte(`null`), nil }
func (marshalFails) MarshalJSON() ([]byte, error)  { return nil, errors.New("no") }
func (t textThing) MarshalText() ([]byte, error)   { return []byte("text:" + t.s), nil }
func (p *ptrMarshaler) MarshalJSON() ([]byte, error) {
	return json.Marshal("ptr:" + p.s)
}

func sample() *everything {
	one, yes := 1, true
	e := &everything{
		Embedded:    Embedded{E1: "e1", Name: "shadowed"},
		EmbeddedPtr: &EmbeddedPtr{P1: "p1"},
		Tagged:      Tagged{T1: "t1"},
		conflictA:   conflictA{Same: "a"},
		conflictB:   conflictB{Same: "b"},
		Name:        "outer",
		OmitPtr:     &one,
		Zeroer:      zeroer{v: 7},
		EmptySlice:  []string{},
		EmptyMap:    map[string]string{},
		Bytes:       []byte("hello\x00"),
		Array:       [3]int{1, 2, 3},
		IntKeys:     map[int]string{10: "ten", 2: "two", -1: "minus"},
		TextKeys:    map[textKey]int{2: 2, 0: 0},
		Quoted:      42,
		QuotedStr:   "q<\">",
		QuotedBool:  &yes,
		Float:       1.5,
		NegZero:     math.Copysign(0, -1),
		Small:       1e-9,
		Large:       1e22,
		Float32:     0.1,
		Number:      "12.50",
		Invalid:     "bad\xffbyte\xfe\xfd",
		Multiline:   "#cloud-config\nuser: x\n",
		Untagged:    "untagged",
		unexported:  "hidden",
		Dash:        "dash",
		BadTag:      "bad tag",
		Lists:       [][]any{{1, "a", map[string]any{"status": map[string]any{}, "k": nil}}, {}},
		Any:         map[string]any{"x": []any{}, "y": map[string]any{}, "spec": map[string]any{"resources": map[string]any{}}},
		AnyMap:      map[string]any{"b": 1.25, "a": []any{map[string]any{}, nil, "s"}, "creationTimestamp": nil},
		Text:        textThing{"v"},
		PtrM:        ptrMarshaler{"field"},
		PtrMs:       []ptrMarshaler{{"elem"}},
		PtrMap:      map[string]ptrMarshaler{"k": {"map value (not addressable)"}},
		Quantity:    resource.MustParse("1536Mi"),
		IntOrStr:    intstr.FromString("50%"),
		Duration:    metav1.Duration{Duration: 90 * time.Minute},
		Meta:        metav1.ObjectMeta{Name: "m", Labels: map[string]string{"a": "1", "b": ""}, Annotations: map[string]string{"\xff": "high", "\xef\xbf\xbc": "below", "k\x80": "v\x80", "\xf0\x9f\x98\x80": "emoji"}},
		Items:       []metav1.ObjectMeta{{}, {Name: "second", CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}},
	}
	e.Status.Ready = true
	return e
}

func TestEncoderMatchesReference(t *testing.T) {
	objs := []Object{
		{Body: sample()},
		{Body: *sample()},
		{Body: map[string]any{"status": "dropped at the top", "metadata": map[string]any{}, "k": "v"}},
		{Body: map[string]string{"status": "dropped at the top", "k": "v"}},
		{Body: &recursive{Name: "root", Next: &recursive{Name: "next"}, Children: []recursive{{Name: "child", Children: []recursive{}}}}},
		{Body: nil},
		{Body: &everything{}},
	}
	want, err := referenceWrite(objs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Write(objs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("encoder differs from the JSON path (-json +encoder):\n%s", diff)
	}
	// The sample reaches the cases it is meant to.
	for _, s := range []string{"e1: e1", "p1: p1", "tagged:\n  t1: t1", "name: outer", "quoted: \"42\"", "key-c: 2",
		"bytes: aGVsbG8A", "large: 1e+22", "small: 1e-9", "number: 12.50", "noNumber: 0", "numberM: 1e+400",
		"ptrM: ptr:field", "- ptr:elem", "- [1,\"a\",{\"k\":null}]", "\"-\": dash", "Untagged: untagged", "quantity: 1536Mi"} {
		if !strings.Contains(string(got), s) {
			t.Errorf("output lacks %q:\n%s", s, got)
		}
	}
	for _, s := range []string{"negZero", "omitFloat", "omitUint", "omitArray", "Same:", "shadowed", "hidden", "ready", "creationTimestamp: null"} {
		if strings.Contains(string(got), s) {
			t.Errorf("output has %q", s)
		}
	}
}

func TestEncoderErrorsLikeJSON(t *testing.T) {
	for name, body := range map[string]any{
		"channel":   map[string]any{"c": make(chan int)},
		"nan":       map[string]any{"f": math.NaN()},
		"marshaler": map[string]any{"m": marshalFails{}},
		"scalar":    "not an object",
		"list":      []string{"not", "an", "object"},
	} {
		_, refErr := referenceWrite([]Object{{Body: body}})
		_, err := Write([]Object{{Body: body}})
		if (refErr == nil) != (err == nil) {
			t.Errorf("%s: encoder error %v, JSON path error %v", name, err, refErr)
		}
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
