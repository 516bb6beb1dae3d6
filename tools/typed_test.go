package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestPanicBecomesErrorResult(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	tool := New(Spec{Name: "boom", Effect: EffectRead, Kind: "other", Title: "Boom"}, func(ctx context.Context, env *Env, in in) Result {
		var m map[string]int
		m["x"] = in.N // nil map write panics
		return Result{}
	})
	h := newHarness(t, nil)
	r := tool.Run(context.Background(), h.env, json.RawMessage(`{"n": 1}`))
	mustErr(t, r, "boom failed with an internal error")
	if _, ok := r.Raw.(map[string]any)["stack"]; !ok {
		t.Fatal("no stack in raw output")
	}
}

func TestSchemaNestedValidation(t *testing.T) {
	type item struct {
		A string `json:"a" schema:"enum=x,enum=y"`
	}
	type in struct {
		Items []item          `json:"items" schema:"maxItems=2"`
		M     map[string]bool `json:"m,omitempty"`
	}
	tool := New(Spec{Name: "t", Effect: EffectRead, Kind: "other"}, func(ctx context.Context, env *Env, in in) Result {
		return Result{Output: "ok"}
	}).(*typed[in])
	for args, want := range map[string]string{
		`{"items": [{"a": "z"}]}`:                    "field items[0].a must be one of",
		`{"items": [{"a": "x"}, {"a": "x"}, {}]}`:    "field items has 3 items; at most 2",
		`{"items": [{}]}`:                            "missing required field items[0].a",
		`{"items": [], "m": {"k": "v"}}`:             "field m.k must be true or false",
		`{"items": [{"a": "x", "b": 1}]}`:            "unknown field items[0].b",
		`{"items": [{"a": "x"}], "m": {"k": true}} `: "",
		`{"items": {"a": "x"}}`:                      "field items must be an array",
		`{"items": [7]}`:                             "items[0] must be an object",
	} {
		_, err := tool.Decode(json.RawMessage(args))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
}

// TestValidateByType gives each JSON type's checker its accepted and refused values, with the
// error that names the field.
func TestValidateByType(t *testing.T) {
	type in struct {
		S   string   `json:"s" schema:"maxLength=3,enum=ab,enum=abc"`
		I   int      `json:"i,omitempty" schema:"minimum=1,maximum=5"`
		F   float64  `json:"f,omitempty"`
		B   bool     `json:"b,omitempty"`
		Arr []string `json:"arr,omitempty" schema:"minItems=1,maxItems=2"`
	}
	tool := New(Spec{Name: "t", Effect: EffectRead, Kind: "other"}, func(ctx context.Context, env *Env, in in) Result {
		return Result{Output: "ok"}
	}).(*typed[in])
	for args, want := range map[string]string{
		`{"s": "ab", "i": 5, "f": 1.5, "b": true, "arr": ["x"]}`: "",
		`{"s": "ab", "i": null}`:                                 "",
		`{"s": null}`:                                            "field s must not be null",
		`[]`:                                                     "the arguments must be an object, not an array",
		`{}`:                                                     "missing required field s",
		`{"s": 1}`:                                               "field s must be a string, not a number",
		`{"s": "abcd"}`:                                          "field s is 4 bytes long; at most 3 are allowed",
		`{"s": "a"}`:                                             `field s must be one of "ab", "abc", not "a"`,
		`{"s": "ab", "i": "2"}`:                                  "field i must be a number, not a string",
		`{"s": "ab", "i": 2.5}`:                                  "field i must be a whole number within range, not 2.5",
		`{"s": "ab", "i": 99999999999999999999}`:                 "field i must be a whole number within range",
		`{"s": "ab", "f": 1e999}`:                                `field f: "1e999" is out of range`,
		`{"s": "ab", "i": 0}`:                                    "field i is 0; the minimum is 1",
		`{"s": "ab", "i": 6}`:                                    "field i is 6; the maximum is 5",
		`{"s": "ab", "b": "yes"}`:                                "field b must be true or false, not a string",
		`{"s": "ab", "arr": []}`:                                 "field arr needs at least 1 items",
		`{"s": "ab", "arr": ["a", "b", "c"]}`:                    "field arr has 3 items; at most 2 are allowed",
		`{"s": "ab", "arr": [1]}`:                                "field arr[0] must be a string, not a number",
		`{"s": "ab", "x": 1}`:                                    "unknown field x (known fields: s, i, f, b, arr)",
	} {
		_, err := tool.Decode(json.RawMessage(args))
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v", args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
}

// A schema tag keyword the validator does not check is refused when the schema is built, and a
// slice is a plain "array" (not the library's nullable ["null","array"]), as providers expect.
func TestSchemaTag(t *testing.T) {
	type bad struct {
		S string `json:"s" schema:"pattern=^a"`
	}
	if _, err := reflectSchema(reflect.TypeFor[bad]()); err == nil || !strings.Contains(err.Error(), `unknown keyword "pattern"`) {
		t.Errorf("pattern= error = %v", err)
	}
	type good struct {
		L []string          `json:"l" schema:"maxItems=2"`
		P *int              `json:"p,omitempty" schema:"minimum=0.5"`
		M map[string][]bool `json:"m,omitempty"`
	}
	s, err := reflectSchema(reflect.TypeFor[good]())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(s)
	want := `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"maxItems":2},"p":{"type":"integer","minimum":0.5},"m":{"type":"object","additionalProperties":{"type":"array","items":{"type":"boolean"}}}},"required":["l"],"additionalProperties":false}`
	if string(raw) != want {
		t.Errorf("schema\n got %s\nwant %s", raw, want)
	}
}
