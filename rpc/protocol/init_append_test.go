package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// plainType is t with the same fields and tags and no methods, at every level, so that
// json.Marshal of a value of it is encoding/json's own reflection, whatever MarshalJSON methods
// t and its fields have.
func plainType(t reflect.Type) reflect.Type {
	switch t.Kind() {
	case reflect.Struct:
		fields := make([]reflect.StructField, t.NumField())
		for i := range fields {
			fields[i] = t.Field(i)
			fields[i].Type = plainType(fields[i].Type)
		}
		return reflect.StructOf(fields)
	case reflect.Pointer:
		return reflect.PointerTo(plainType(t.Elem()))
	case reflect.Slice:
		if t == rawType {
			return t
		}
		return reflect.SliceOf(plainType(t.Elem()))
	case reflect.Map:
		return reflect.MapOf(t.Key(), plainType(t.Elem()))
	}
	return t
}

// plain copies v into its plainType.
func plain(v any) any {
	src := reflect.ValueOf(v)
	dst := reflect.New(plainType(src.Type())).Elem()
	copyPlain(dst, src)
	return dst.Interface()
}

func copyPlain(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Struct:
		for i := range src.NumField() {
			copyPlain(dst.Field(i), src.Field(i))
		}
	case reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
			copyPlain(dst.Elem(), src.Elem())
		}
	case reflect.Slice:
		if src.Type() == rawType {
			dst.Set(src)
		} else if !src.IsNil() {
			dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
			for i := range src.Len() {
				copyPlain(dst.Index(i), src.Index(i))
			}
		}
	case reflect.Map:
		if !src.IsNil() {
			dst.Set(reflect.MakeMap(dst.Type()))
			for _, k := range src.MapKeys() {
				e := reflect.New(dst.Type().Elem()).Elem()
				copyPlain(e, src.MapIndex(k))
				dst.SetMapIndex(k, e)
			}
		}
	default:
		dst.Set(src)
	}
}

// sameAsReflection checks that json.Marshal of v (through its MarshalJSON) and of its plain
// copy agree.
func sameAsReflection(t *testing.T, v any) {
	t.Helper()
	got, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(plain(v))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%T:\n got %s\nwant %s", v, got, want)
	}
}

// TestInitializeShapesMatchMarshal fills every field of initialize's shapes by reflection, then
// empties each in turn, and checks every time that the hand-written encoders write what
// encoding/json's reflection writes; so does a field added to a struct and forgotten by its
// encoder. Emptying a field must change the output, or this test filled something no encoder
// writes.
func TestInitializeShapesMatchMarshal(t *testing.T) {
	for _, v := range []any{&AgentServerCapabilities{}, &AgentCapabilities{}, &ProviderInfo{}, &ClientInfo{}} {
		full := reflect.ValueOf(v).Elem()
		sameAsReflection(t, full.Interface()) // the zero value
		n := 0
		var paths []fieldPath
		fill(full, nil, &n, &paths)
		if len(paths) < 2 {
			t.Fatalf("%T: %d fields filled", v, len(paths))
		}
		base, _ := json.Marshal(full.Interface())
		sameAsReflection(t, full.Interface())
		for _, p := range paths {
			c := reflect.New(full.Type()).Elem()
			copyValue(c, full)
			p.zero(c)
			sameAsReflection(t, c.Interface())
			if out, _ := json.Marshal(c.Interface()); bytes.Equal(out, base) {
				t.Errorf("%T: emptying %s changes nothing", v, p)
			}
		}
	}
	// What the filler does not vary: each session capability alone, empty and nil lists.
	for _, sc := range []SessionCapabilities{{}, {List: &struct{}{}}, {Resume: &struct{}{}}, {Close: &struct{}{}}, {Delete: &struct{}{}},
		{List: &struct{}{}, Delete: &struct{}{}}, {List: &struct{}{}, Resume: &struct{}{}, Close: &struct{}{}, Delete: &struct{}{}}} {
		sameAsReflection(t, AgentCapabilities{LoadSession: true, SessionCapabilities: sc, MCPCapabilities: MCPCapabilities{HTTP: true}})
	}
	sameAsReflection(t, AgentServerCapabilities{ProtocolVersion: 1, Providers: []ProviderInfo{}})
	sameAsReflection(t, AgentServerCapabilities{Providers: []ProviderInfo{{ProviderID: "a", Models: []string{}}, {ProviderID: "b\xff<", Models: []string{"m1", "</script>"}, KeyStatus: KeySet}}})
	sameAsReflection(t, ClientInfo{Name: "n", Version: "v\u2029"})
	if got := AppendJSONStrings(nil, nil); string(got) != "null" {
		t.Errorf("AppendJSONStrings(nil) = %s", got)
	}
}
