package tools

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// marshalSchema encodes s exactly as json.Marshal does, but fast for the keywords a tool's input
// schema uses. jsonschema-go's Schema.MarshalJSON copies the whole Schema struct (about sixty
// fields), reflects on it and calls json.Marshal again for every nested schema and property, and
// encoding/json then compacts each nested result: ~80 µs a tool, 1.5 ms for the catalog even with
// warm caches, paid on the first turn of every process. A schema that uses any other keyword
// goes to json.Marshal whole.
func marshalSchema(s *jsonschema.Schema) ([]byte, error) {
	if !plainSchema(s) {
		return json.Marshal(s)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := encodeSchema(&buf, enc, s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// plainSchema reports whether s and every schema in it set only the keywords encodeSchema writes.
func plainSchema(s *jsonschema.Schema) bool {
	if s == nil {
		return true
	}
	if s.Type != "" && s.Types != nil {
		return false // json.Marshal's error, not ours
	}
	rest := *s
	rest.Type, rest.Types, rest.Description, rest.Enum = "", nil, "", nil
	rest.Minimum, rest.Maximum, rest.MaxLength, rest.MinItems, rest.MaxItems = nil, nil, nil, nil, nil
	rest.Required, rest.Properties, rest.PropertyOrder = nil, nil, nil
	rest.Items, rest.AdditionalProperties, rest.Not = nil, nil, nil
	if !reflect.ValueOf(rest).IsZero() {
		return false
	}
	seen := make(map[string]bool, len(s.PropertyOrder))
	for _, name := range s.PropertyOrder {
		if seen[name] {
			return false // json.Marshal's error, not ours
		}
		seen[name] = true
	}
	for _, p := range s.Properties {
		if !plainSchema(p) {
			return false
		}
	}
	return plainSchema(s.Items) && plainSchema(s.AdditionalProperties) && plainSchema(s.Not)
}

// encodeSchema writes s with its keys in jsonschema-go's order (type, properties, items, then the
// Schema struct's field order), the empty schema as true and {"not":{}} as false, as
// Schema.MarshalJSON does; scalars go through enc, so their escaping is encoding/json's own.
func encodeSchema(buf *bytes.Buffer, enc *json.Encoder, s *jsonschema.Schema) error {
	if s == nil {
		buf.WriteString("null")
		return nil
	}
	start := buf.Len()
	buf.WriteByte('{')
	var err error
	key := func(k string) {
		if buf.Len() > start+1 {
			buf.WriteByte(',')
		}
		buf.WriteString(`"` + k + `":`)
	}
	value := func(v any) {
		if err == nil {
			err = enc.Encode(v)
			buf.Truncate(buf.Len() - 1) // Encode's newline
		}
	}
	switch {
	case s.Type != "":
		key("type")
		value(s.Type)
	case s.Types != nil:
		key("type")
		value(s.Types)
	}
	if s.Properties != nil {
		key("properties")
		buf.WriteByte('{')
		// The names PropertyOrder lists (ForType's field order), then the others sorted.
		names := make([]string, 0, len(s.Properties))
		for _, name := range s.PropertyOrder {
			if _, ok := s.Properties[name]; ok {
				names = append(names, name)
			}
		}
		if len(names) < len(s.Properties) {
			var others []string
			for name := range s.Properties {
				if !slices.Contains(s.PropertyOrder, name) {
					others = append(others, name)
				}
			}
			slices.Sort(others)
			names = append(names, others...)
		}
		for i, name := range names {
			if i > 0 {
				buf.WriteByte(',')
			}
			value(name)
			buf.WriteByte(':')
			if err == nil {
				err = encodeSchema(buf, enc, s.Properties[name])
			}
		}
		buf.WriteByte('}')
	}
	if s.Items != nil {
		key("items")
		if err == nil {
			err = encodeSchema(buf, enc, s.Items)
		}
	}
	if s.Description != "" {
		key("description")
		value(s.Description)
	}
	if len(s.Enum) != 0 {
		key("enum")
		value(s.Enum)
	}
	for _, f := range []struct {
		k string
		v *float64
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}} {
		if f.v != nil {
			key(f.k)
			value(*f.v)
		}
	}
	for _, f := range []struct {
		k string
		v *int
	}{{"maxLength", s.MaxLength}, {"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		if f.v != nil {
			key(f.k)
			value(*f.v)
		}
	}
	if len(s.Required) != 0 {
		key("required")
		value(s.Required)
	}
	if s.AdditionalProperties != nil {
		key("additionalProperties")
		if err == nil {
			err = encodeSchema(buf, enc, s.AdditionalProperties)
		}
	}
	if s.Not != nil {
		key("not")
		if err == nil {
			err = encodeSchema(buf, enc, s.Not)
		}
	}
	buf.WriteByte('}')
	switch string(buf.Bytes()[start:]) {
	case `{}`:
		buf.Truncate(start)
		buf.WriteString("true")
	case `{"not":true}`:
		buf.Truncate(start)
		buf.WriteString("false")
	}
	return err
}
