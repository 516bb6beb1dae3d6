package tools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// reflected is a tool's input schema as New reflects it, before it is encoded.
func (t *typed[In]) reflected() (*jsonschema.Schema, error) {
	return reflectSchema(reflect.TypeFor[In]())
}

func catalogSchemas(t testing.TB) map[string]*jsonschema.Schema {
	out := map[string]*jsonschema.Schema{}
	for _, tl := range Default().order {
		r, ok := tl.(interface {
			reflected() (*jsonschema.Schema, error)
		})
		if !ok {
			t.Fatalf("%s: not a typed tool", tl.Name())
		}
		s, err := r.reflected()
		if err != nil {
			t.Fatalf("%s: %v", tl.Name(), err)
		}
		out[tl.Name()] = s
	}
	return out
}

// TestMarshalSchemaIsTheLibrarys pins that the fast encoding is byte for byte what
// jsonschema-go's Schema.MarshalJSON gives, for every tool and for the corners it handles
// (true and false schemas, type lists, escaping, properties outside PropertyOrder), and that
// a keyword it does not write goes to the library.
func TestMarshalSchemaIsTheLibrarys(t *testing.T) {
	one, half := 1, 0.5
	cases := catalogSchemas(t)
	cases["empty"] = &jsonschema.Schema{}
	cases["false"] = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	cases["corners"] = &jsonschema.Schema{
		Types:       []string{"null", "string"},
		Description: "a <b> & \u2028 \"quoted\" \x01 \xff",
		Enum:        []any{"<x>", 1.5, nil},
		Minimum:     &half, Maximum: &half, MaxLength: &one, MinItems: &one, MaxItems: &one,
		Required:   []string{"z", "a"},
		Properties: map[string]*jsonschema.Schema{"z": {}, "a": {Type: "integer"}, "m": {Type: "string"}, "ü<": {}},
		// "gone" is listed but not a property; "a" and "ü<" are properties not listed.
		PropertyOrder:        []string{"z", "gone", "m"},
		Items:                &jsonschema.Schema{Type: "string", Not: &jsonschema.Schema{Type: "null"}},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	cases["empty properties"] = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	cases["other keyword"] = &jsonschema.Schema{Type: "string", Pattern: "^a$"}
	cases["other keyword inside"] = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"a": {Type: "string", Format: "uri"}}}
	cases["extra"] = &jsonschema.Schema{Type: "string", Extra: map[string]any{"x-y": 1}}
	for name, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := marshalSchema(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	for _, s := range []*jsonschema.Schema{
		{Type: "string", Types: []string{"string"}},
		{Type: "object", Properties: map[string]*jsonschema.Schema{"a": {}}, PropertyOrder: []string{"a", "a"}},
	} {
		if _, err := json.Marshal(s); err == nil {
			t.Fatalf("%+v: the library accepts it now; drop this case", s)
		}
		if _, err := marshalSchema(s); err == nil {
			t.Errorf("%+v: no error, want the library's", s)
		}
	}
}

// TestMarshalSchemaAllocs pins the saving: encoding the catalog's schemas, which every fresh
// process does before its first request, allocates a small fraction of what the library's
// MarshalJSON does.
func TestMarshalSchemaAllocs(t *testing.T) {
	if raceBuild {
		t.Skip("allocation counts are the race detector's under -race")
	}
	schemas := catalogSchemas(t)
	lib := testing.AllocsPerRun(20, func() {
		for _, s := range schemas {
			json.Marshal(s)
		}
	})
	fast := testing.AllocsPerRun(20, func() {
		for _, s := range schemas {
			marshalSchema(s)
		}
	})
	t.Logf("%d schemas: %.0f allocations with json.Marshal, %.0f with marshalSchema", len(schemas), lib, fast)
	if fast*4 > lib {
		t.Errorf("marshalSchema made %.0f allocations, more than a quarter of json.Marshal's %.0f", fast, lib)
	}
}

func BenchmarkMarshalSchemas(b *testing.B) {
	schemas := catalogSchemas(b)
	for _, f := range []struct {
		name string
		fn   func(*jsonschema.Schema) ([]byte, error)
	}{{"library", func(s *jsonschema.Schema) ([]byte, error) { return json.Marshal(s) }}, {"fast", marshalSchema}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range schemas {
					f.fn(s)
				}
			}
		})
	}
}
