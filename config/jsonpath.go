package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// JSONPath returns the path ("providers.ollama.baseUrl", "prompt[2].text") of the JSON value in
// data that ends at or after byte offset, the position encoding/json reports in an
// UnmarshalTypeError. encoding/json's own Field leaves out map keys and array indexes, and an
// error that names the key is the whole point of validation.
func JSONPath(data []byte, offset int64) string {
	var stack []pathFrame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.obj {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				b.WriteByte('[')
				b.WriteString(strconv.Itoa(f.idx))
				b.WriteByte(']')
			}
		}
		return b.String()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return path()
		}
		after := dec.InputOffset()
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.obj && top.wantKey {
				if d, ok := tok.(json.Delim); ok && d == '}' {
					stack = stack[:len(stack)-1]
					endValue(stack)
					continue
				}
				top.key, _ = tok.(string)
				top.wantKey = false
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if after >= offset {
					return path()
				}
				stack = append(stack, pathFrame{obj: d == '{', wantKey: d == '{'})
			case ']':
				stack = stack[:len(stack)-1]
				endValue(stack)
			}
			continue
		}
		if after >= offset {
			return path()
		}
		endValue(stack)
	}
}

type pathFrame struct {
	obj     bool
	key     string
	idx     int
	wantKey bool
}

// endValue moves the innermost container past one finished value.
func endValue(stack []pathFrame) {
	if len(stack) == 0 {
		return
	}
	f := &stack[len(stack)-1]
	if f.obj {
		f.wantKey = true
	} else {
		f.idx++
	}
}

// DecodeError turns an encoding/json error from decoding data into one that names the key.
func DecodeError(data []byte, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		p := JSONPath(data, te.Offset)
		if p == "" {
			p = te.Field
		}
		return &KeyError{Key: p, Msg: "expected " + typeName(te.Type.Kind().String()) + ", got " + firstWord(te.Value)}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &KeyError{Key: JSONPath(data, se.Offset), Msg: "invalid JSON: " + se.Error()}
	}
	return err
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}

func typeName(kind string) string {
	switch kind {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "number"
	case "slice", "array":
		return "array"
	case "map", "struct":
		return "object"
	case "bool":
		return "boolean"
	}
	return kind
}

// KeyError is a settings or params error that names the offending key.
type KeyError struct {
	Key string
	Msg string
}

func (e *KeyError) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}
