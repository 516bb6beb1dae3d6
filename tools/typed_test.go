package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestPanicBecomesErrorResult(t *testing.T) {
	type in struct {
		N int `json:"n" jsonschema:"description=n"`
	}
	tool := New(Spec{Name: "boom", Description: "d", Effect: EffectRead, Kind: "other", Title: "Boom"}, func(ctx context.Context, env *Env, in in) Result {
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
		A string `json:"a" jsonschema:"description=a,enum=x,enum=y"`
	}
	type in struct {
		Items []item          `json:"items" jsonschema:"description=items,maxItems=2"`
		M     map[string]bool `json:"m,omitempty" jsonschema:"description=m"`
	}
	tool := New(Spec{Name: "t", Description: "d", Effect: EffectRead, Kind: "other"}, func(ctx context.Context, env *Env, in in) Result {
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
