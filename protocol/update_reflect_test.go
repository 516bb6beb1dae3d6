package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// updateKinds lists every sessionUpdate discriminator; a kind missing here still has its
// fields written by the "" kind, which takes the default branch of both encoders.
var updateKinds = []string{
	UpdateUserMessageChunk, UpdateAgentMessageChunk, UpdateAgentThoughtChunk, UpdateToolCall,
	UpdateToolCallUpdate, UpdatePlan, UpdateAvailableCommandsUpdate, UpdateCurrentModeUpdate,
	UpdateConfigOptionUpdate, UpdateSessionInfoUpdate, UpdateUsageUpdate, UpdateCompactionUpdate,
	UpdateNotice, "",
}

// TestAppendSessionUpdateWritesEveryField fills every field of SessionUpdate, nested ones
// included, by reflection, and checks that the hand-written encoder writes what encoding/json
// writes, for every update kind. It then empties each field in turn: the outputs must still
// agree, and emptying the field must change what some kind writes, so a field that neither
// encoder writes (or that this test fails to fill) is reported too. A field added to the struct
// and forgotten by AppendSessionUpdate fails here, not on a client.
func TestAppendSessionUpdateWritesEveryField(t *testing.T) {
	var full SessionUpdate
	n := 0
	var paths []fieldPath
	fill(reflect.ValueOf(&full).Elem(), nil, &n, &paths)
	if len(paths) < 40 {
		t.Fatalf("only %d fields filled; the filler misses some", len(paths))
	}
	// Both shapes of a tool call's content: a diff (oldText always written) and the rest.
	for _, contentType := range []string{"diff", "content"} {
		full.ToolContent[0].Type = contentType
		base := encodeAll(t, full)
		for _, p := range paths {
			if p.String() == "SessionUpdate" {
				continue // the discriminator: encodeAll sets it
			}
			u := deepCopy(full)
			p.zero(reflect.ValueOf(&u).Elem())
			if reflect.DeepEqual(u, full) {
				t.Fatalf("%s: zeroing changed nothing", p)
			}
			if got := encodeAll(t, u); reflect.DeepEqual(got, base) && !(contentType == "content" && p.String() == "ToolContent.OldText") {
				t.Errorf("%s (content type %q): no update kind writes this field", p, contentType)
			}
		}
	}
}

// encodeAll encodes u as every kind with both encoders, failing on a difference, and returns
// encoding/json's outputs.
func encodeAll(t *testing.T, u SessionUpdate) []string {
	t.Helper()
	var out []string
	for _, kind := range updateKinds {
		u.SessionUpdate = kind
		want, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendSessionUpdate(nil, &u); !bytes.Equal(got, want) {
			t.Fatalf("kind %q:\nappend %s\n  json %s", kind, got, want)
		}
		out = append(out, string(want))
	}
	return out
}

// fieldPath leads from SessionUpdate to one filled leaf: struct field indexes, through
// pointers and the first element of slices.
type fieldPath struct {
	index []int
	names []string
}

func (p fieldPath) String() string { return strings.Join(p.names, ".") }

func (p fieldPath) zero(v reflect.Value) {
	for _, i := range p.index {
		for v.Kind() == reflect.Pointer || (v.Kind() == reflect.Slice && !isLeaf(v.Type())) {
			if v.Kind() == reflect.Pointer {
				v = v.Elem()
			} else {
				v = v.Index(0)
			}
		}
		v = v.Field(i)
	}
	v.Set(reflect.Zero(v.Type()))
}

var rawType = reflect.TypeFor[json.RawMessage]()

// isLeaf says whether a value of type t is filled and zeroed as one field.
func isLeaf(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct:
		return false
	case reflect.Pointer, reflect.Slice:
		return t != rawType && !(t.Elem().Kind() == reflect.Struct)
	}
	return true
}

// fill gives v a non-zero value everywhere: distinct strings with characters that need
// escaping, numbers, one element per slice, one entry per map; it records each leaf's path.
func fill(v reflect.Value, p *fieldPath, n *int, paths *[]fieldPath) {
	*n++
	if p != nil && isLeaf(v.Type()) {
		*paths = append(*paths, *p)
	}
	if v.Type() == rawType {
		v.SetBytes(fmt.Appendf(nil, `{"k<%d>":[1,"\u2028"]}`, *n))
		return
	}
	// A struct's path goes on through pointers and slices to its fields.
	inner := p
	if isLeaf(v.Type()) {
		inner = nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d <&> \u2028 é\n", *n))
	case reflect.Int:
		v.SetInt(int64(*n))
	case reflect.Float64:
		v.SetFloat(float64(*n) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), inner, n, paths)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), inner, n, paths)
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(reflect.ValueOf(fmt.Sprintf("k%d", *n)), reflect.ValueOf(fmt.Sprintf("v%d", *n)))
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			var q fieldPath
			if p != nil {
				q = fieldPath{index: append([]int(nil), p.index...), names: append([]string(nil), p.names...)}
			}
			q.index = append(q.index, i)
			q.names = append(q.names, f.Name)
			fill(v.Field(i), &q, n, paths)
		}
	default:
		panic("fill: no filler for " + v.Type().String())
	}
}

func deepCopy(u SessionUpdate) SessionUpdate {
	var c SessionUpdate
	// A round trip through JSON would lose the kind-dependent fields; copy by reflection.
	copyValue(reflect.ValueOf(&c).Elem(), reflect.ValueOf(u))
	return c
}

func copyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.New(src.Type().Elem()))
		copyValue(dst.Elem(), src.Elem())
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			copyValue(dst.Index(i), src.Index(i))
		}
	case reflect.Map:
		if src.IsNil() {
			return
		}
		dst.Set(reflect.MakeMap(src.Type()))
		for _, k := range src.MapKeys() {
			dst.SetMapIndex(k, src.MapIndex(k))
		}
	case reflect.Struct:
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				copyValue(dst.Field(i), src.Field(i))
			}
		}
	default:
		dst.Set(src)
	}
}
