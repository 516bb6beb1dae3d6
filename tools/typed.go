package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Spec is the static part of a tool: everything but its input type and its body.
type Spec struct {
	Name   string
	Effect Effect
	// Kind is the ACP tool kind the clients show.
	Kind string
	// Title is the fallback call title while arguments are still partial.
	Title string
	// Needs, when set, keeps the tool from the model until the settings meet them.
	Needs []Need
}

// Titler is implemented by an input struct that can name a call ("Read main.go").
type Titler interface{ title() string }

// MaxArgsBytes caps the raw arguments of one call; a model that streams megabytes of arguments is
// told so instead of being decoded.
const MaxArgsBytes = 16 << 20

// New builds a Tool from a typed input struct. The JSON schema the model sees is generated from In
// (its json tags, and schema tags for limits: see schemaTag), arguments are checked against that
// same schema before they are decoded (unknown fields, wrong types, missing required fields,
// out-of-range values each become an error result naming the field), and a panic in run becomes
// an error result too.
//
// The schema is reflected on first use, not when New runs: every tool is a package-level
// variable, and reflecting them all at init cost the daemon ~8 ms of start-up before it could
// answer initialize. New itself is one composite literal, which the compiler inlines and lays
// out in the binary: the tools cost the package's init nothing.
func New[In any](spec Spec, run func(ctx context.Context, env *Env, in In) Result) Tool {
	return &typed[In]{spec: spec, run: run}
}

// schemas is the tool's schema and its JSON, reflected once, at first use.
func (t *typed[In]) schemas() (*jsonschema.Schema, json.RawMessage) {
	t.once.Do(func() {
		s, err := reflectSchema(reflect.TypeFor[In]())
		if err != nil {
			panic(fmt.Sprintf("tools: schema of %s: %v", t.spec.Name, err))
		}
		raw, err := json.Marshal(s)
		if err != nil {
			panic(fmt.Sprintf("tools: schema of %s: %v", t.spec.Name, err))
		}
		t.schema, t.raw = s, raw
	})
	return t.schema, t.raw
}

// reflectSchema is the schema of input type t: the MCP SDK's schema library (also what the MCP
// tools' schemas are) infers types, properties, required fields (those without omitempty) and
// additionalProperties:false from the Go type; the schema tags add the limits.
func reflectSchema(t reflect.Type) (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := refine(t, s); err != nil {
		return nil, err
	}
	if s.Properties == nil {
		// Providers want an object schema with properties, even an empty one.
		s.Properties = map[string]*jsonschema.Schema{}
	}
	return s, nil
}

// refine walks type t beside its inferred schema s: it applies each struct field's schema tag
// and makes a nullable type (["null","array"] for a slice) its plain type, as the schema the
// model sees has always been. A null argument for an optional field means "not given" in
// validate, and one for a required field is refused there.
func refine(t reflect.Type, s *jsonschema.Schema) error {
	if s == nil {
		return nil
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return refine(t.Elem(), s.Items)
	case reflect.Map:
		return refine(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name := jsonName(f)
			ps := s.Properties[name]
			if f.Anonymous || ps == nil {
				continue
			}
			if tag, ok := f.Tag.Lookup("schema"); ok {
				if err := schemaTag(ps, tag); err != nil {
					return fmt.Errorf("field %s: %v", f.Name, err)
				}
			}
			if err := refine(f.Type, ps); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonName is the property name encoding/json gives field f.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// schemaTag applies a field's schema tag, comma-separated keyword=value pairs from the subset of
// JSON Schema that validate checks: `schema:"maxLength=4096"`, `schema:"minimum=1,maximum=10"`,
// `schema:"minItems=1,maxItems=50"`, `schema:"enum=go,enum=npm"`. Any other keyword is an error,
// so a limit the validator would not enforce cannot be written.
func schemaTag(s *jsonschema.Schema, tag string) error {
	for kv := range strings.SplitSeq(tag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("schema tag %q: %q is not keyword=value", tag, kv)
		}
		var err error
		switch k {
		case "enum":
			s.Enum = append(s.Enum, v)
		case "maxLength":
			s.MaxLength, err = intPtr(v)
		case "minItems":
			s.MinItems, err = intPtr(v)
		case "maxItems":
			s.MaxItems, err = intPtr(v)
		case "minimum":
			s.Minimum, err = floatPtr(v)
		case "maximum":
			s.Maximum, err = floatPtr(v)
		default:
			return fmt.Errorf("schema tag %q: unknown keyword %q", tag, k)
		}
		if err != nil {
			return fmt.Errorf("schema tag %q: %v", tag, err)
		}
	}
	return nil
}

func intPtr(v string) (*int, error) {
	n, err := strconv.Atoi(v)
	return &n, err
}

func floatPtr(v string) (*float64, error) {
	f, err := strconv.ParseFloat(v, 64)
	return &f, err
}

type typed[In any] struct {
	spec Spec
	run  func(context.Context, *Env, In) Result
	// once makes schema and raw (its JSON) at first use: see schemas.
	once   sync.Once
	schema *jsonschema.Schema
	raw    json.RawMessage
}

func (t *typed[In]) Name() string { return t.spec.Name }

// Description is empty: a built-in tool and each of its arguments are described in one place, the
// prompt config (prompts/builtin/tools.yml), which the session renders the model's tool
// declarations from. The input struct's tags carry only the schema's shape and limits.
func (t *typed[In]) Description() string { return "" }
func (t *typed[In]) Effect() Effect      { return t.spec.Effect }
func (t *typed[In]) Kind() string        { return t.spec.Kind }
func (t *typed[In]) Needs() []Need       { return t.spec.Needs }

func (t *typed[In]) Schema() json.RawMessage {
	_, raw := t.schemas()
	return append(json.RawMessage(nil), raw...)
}

func (t *typed[In]) Title(args json.RawMessage) (title string) {
	defer func() {
		if recover() != nil {
			title = t.spec.Title
		}
	}()
	var in In
	if len(args) > 0 && len(args) <= MaxArgsBytes && json.Unmarshal(args, &in) == nil {
		// *In has In's methods too, so this finds value and pointer receivers alike.
		if ti, ok := any(&in).(Titler); ok {
			if s := ti.title(); s != "" {
				return s
			}
		}
	}
	return t.spec.Title
}

func (t *typed[In]) Run(ctx context.Context, env *Env, args json.RawMessage) (res Result) {
	in, err := t.Decode(args)
	if err != nil {
		return Errorf("invalid arguments for %s: %v", t.spec.Name, err)
	}
	defer func() {
		if p := recover(); p != nil {
			res = Errorf("%s failed with an internal error (%v); this is a bug in agentd, not in your call", t.spec.Name, p)
			res.Raw = map[string]any{"panic": fmt.Sprint(p), "stack": string(debug.Stack())}
		}
	}()
	if env == nil || env.Roots == nil || env.WS == nil {
		return Errorf("%s cannot run: the session has no workspace", t.spec.Name)
	}
	return t.run(ctx, env, in)
}

// Decode checks args against the tool's schema and decodes them into In.
func (t *typed[In]) Decode(args json.RawMessage) (In, error) {
	var in In
	args = bytes.TrimSpace(args)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if len(args) > MaxArgsBytes {
		return in, fmt.Errorf("the arguments are %d bytes, more than the %d allowed", len(args), MaxArgsBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return in, fmt.Errorf("the arguments are not valid JSON: %v", err)
	}
	if dec.More() {
		return in, fmt.Errorf("the arguments hold more than one JSON value")
	}
	schema, _ := t.schemas()
	if err := validate(schema, v, ""); err != nil {
		return in, err
	}
	strict := json.NewDecoder(bytes.NewReader(args))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&in); err != nil {
		return in, fmt.Errorf("%v", err)
	}
	return in, nil
}

// validate checks v against the subset of JSON Schema the reflector generates. The error names
// the field as a path such as edits[1].old_text. Each JSON type has its own checker below.
func validate(s *jsonschema.Schema, v any, field string) error {
	if s == nil {
		return nil
	}
	name := field
	if name == "" {
		name = "the arguments"
	}
	if v == nil {
		return fmt.Errorf("field %s must not be null", name)
	}
	switch s.Type {
	case "object":
		return validateObject(s, v, field, name)
	case "array":
		return validateArray(s, v, field, name)
	case "string":
		return validateString(s, v, name)
	case "integer", "number":
		return validateNumber(s, v, name)
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("field %s must be true or false, not %s", name, jsonKind(v))
		}
	}
	return nil
}

// validateObject checks the required fields, then each field against its property's schema
// (or additionalProperties). An explicit null for an optional field means "not given".
func validateObject(s *jsonschema.Schema, v any, field, name string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s must be an object, not %s", name, jsonKind(v))
	}
	for _, req := range s.Required {
		if _, ok := m[req]; !ok {
			return fmt.Errorf("missing required field %s", join(field, req))
		}
	}
	for k, val := range m {
		ps := s.Properties[k]
		if ps == nil {
			if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
				if err := validate(s.AdditionalProperties, val, join(field, k)); err != nil {
					return err
				}
				continue
			}
			return fmt.Errorf("unknown field %s (known fields: %s)", join(field, k), strings.Join(propNames(s), ", "))
		}
		if val == nil {
			if slices.Contains(s.Required, k) {
				return fmt.Errorf("field %s must not be null", join(field, k))
			}
			continue
		}
		if err := validate(ps, val, join(field, k)); err != nil {
			return err
		}
	}
	return nil
}

func validateArray(s *jsonschema.Schema, v any, field, name string) error {
	a, ok := v.([]any)
	if !ok {
		return fmt.Errorf("field %s must be an array, not %s", name, jsonKind(v))
	}
	if s.MaxItems != nil && len(a) > *s.MaxItems {
		return fmt.Errorf("field %s has %d items; at most %d are allowed", name, len(a), *s.MaxItems)
	}
	if s.MinItems != nil && len(a) < *s.MinItems {
		return fmt.Errorf("field %s needs at least %d items", name, *s.MinItems)
	}
	for i, e := range a {
		if err := validate(s.Items, e, fmt.Sprintf("%s[%d]", field, i)); err != nil {
			return err
		}
	}
	return nil
}

func validateString(s *jsonschema.Schema, v any, name string) error {
	str, ok := v.(string)
	if !ok {
		return fmt.Errorf("field %s must be a string, not %s", name, jsonKind(v))
	}
	if s.MaxLength != nil && len(str) > *s.MaxLength {
		return fmt.Errorf("field %s is %d bytes long; at most %d are allowed", name, len(str), *s.MaxLength)
	}
	if len(s.Enum) > 0 && !enumHas(s.Enum, str) {
		return fmt.Errorf("field %s must be one of %s, not %q", name, enumList(s.Enum), str)
	}
	return nil
}

// validateNumber checks an integer or number. The arguments are decoded with UseNumber, so a
// number arrives as its text and an integer beyond int64 is named here, not rounded.
func validateNumber(s *jsonschema.Schema, v any, name string) error {
	n, ok := v.(json.Number)
	if !ok {
		return fmt.Errorf("field %s must be a number, not %s", name, jsonKind(v))
	}
	f, err := n.Float64()
	if err != nil {
		return fmt.Errorf("field %s: %q is out of range", name, n.String())
	}
	if s.Type == "integer" {
		if _, err := n.Int64(); err != nil {
			return fmt.Errorf("field %s must be a whole number within range, not %s", name, n.String())
		}
	}
	if s.Minimum != nil && f < *s.Minimum {
		return fmt.Errorf("field %s is %s; the minimum is %s", name, n.String(), number(*s.Minimum))
	}
	if s.Maximum != nil && f > *s.Maximum {
		return fmt.Errorf("field %s is %s; the maximum is %s", name, n.String(), number(*s.Maximum))
	}
	return nil
}

func join(field, k string) string {
	if field == "" {
		return k
	}
	return field + "." + k
}

// number writes a schema bound as JSON does: 100000000, not 1e+08.
func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// propNames lists s's properties in the input struct's field order.
func propNames(s *jsonschema.Schema) []string {
	out := slices.Clone(s.PropertyOrder)
	for k := range s.Properties {
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func enumHas(enum []any, s string) bool {
	for _, e := range enum {
		if fmt.Sprint(e) == s {
			return true
		}
	}
	return false
}

func enumList(enum []any) string {
	var parts []string
	for _, e := range enum {
		parts = append(parts, fmt.Sprintf("%q", fmt.Sprint(e)))
	}
	return strings.Join(parts, ", ")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
