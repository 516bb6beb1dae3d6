package texttools

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
)

// Parse reads one envelope's body. It is tolerant in what it accepts, because small models write
// every variant of it: blanks around the JSON, a code fence inside the envelope, single-quoted
// strings, trailing commas, Python's True/False/None, `parameters` (Llama 3's word) or `args` for
// `arguments`, arguments as a JSON string holding the object, and an array of calls. What it
// cannot read becomes a Call with Err set, which the model reads as a failed tool result.
func Parse(body string) []Call {
	raw := body
	b := strings.TrimSpace(body)
	if strings.HasPrefix(b, "```") {
		if nl := strings.IndexByte(b, '\n'); nl >= 0 {
			b = b[nl+1:]
		} else {
			b = b[3:]
		}
		b = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(b), "```"))
	}
	if b == "" {
		return []Call{{Raw: raw, Err: "the envelope is empty"}}
	}
	v, err := decodeOne(b)
	if err != nil {
		if fixed := repair(b); fixed != b {
			if v2, err2 := decodeOne(fixed); err2 == nil {
				v, err = v2, nil
			}
		}
	}
	if err != nil {
		// The name, when it is readable, still names the call for the user.
		c := Call{Raw: raw, Err: "its body is not one JSON object (" + err.Error() + ")"}
		if m := nameRE.FindStringSubmatch(b); m != nil && len(m[1]) <= 128 {
			c.Name = m[1]
		}
		return []Call{c}
	}
	switch v[0] {
	case '{':
		return []Call{callOf(v, raw)}
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil || len(items) == 0 {
			return []Call{{Raw: raw, Err: "its body is an empty or invalid list"}}
		}
		out := make([]Call, 0, len(items))
		for _, it := range items {
			if len(it) == 0 || it[0] != '{' {
				out = append(out, Call{Raw: raw, Err: "a list of calls must hold JSON objects"})
				continue
			}
			out = append(out, callOf(it, raw))
		}
		return out
	}
	return []Call{{Raw: raw, Err: "its body must be a JSON object {\"name\": …, \"arguments\": {…}}"}}
}

// nameRE finds the tool's name in a call whose body could not be parsed, so the user still sees
// which tool it was. It uses `+` and a length check where `{1,128}` would unroll into 128
// copies of the class (60 KB at every start of agentd).
var nameRE = regexp.MustCompile(`["']name["']\s*:\s*["']([A-Za-z0-9_.:-]+)["']`)

// decodeOne decodes the first JSON value of s and refuses anything but blank space after it.
func decodeOne(s string) (json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("there is more after the JSON value")
	}
	return v, nil
}

// callOf reads one call object.
func callOf(obj json.RawMessage, raw string) Call {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return Call{Raw: raw, Err: "its body is not a JSON object (" + err.Error() + ")"}
	}
	c := Call{Raw: raw}
	// {"function": {"name": …, "arguments": …}} as OpenAI's own tool_calls carry it.
	if fn, ok := m["function"]; ok && len(fn) > 0 && fn[0] == '{' && m["name"] == nil {
		var inner map[string]json.RawMessage
		if json.Unmarshal(fn, &inner) == nil {
			m = inner
		}
	}
	for _, k := range []string{"name", "tool", "tool_name"} {
		if v, ok := m[k]; ok {
			if json.Unmarshal(v, &c.Name) != nil {
				c.Err = "its \"name\" is not a string"
				return c
			}
			break
		}
	}
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" {
		c.Err = "it names no tool (\"name\" is missing or empty)"
		return c
	}
	var args json.RawMessage
	for _, k := range []string{"arguments", "parameters", "args", "input"} {
		if v, ok := m[k]; ok {
			args = v
			break
		}
	}
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0 || string(args) == "null":
		c.Args = []byte("{}")
	case args[0] == '{':
		c.Args = args
	case args[0] == '"':
		// Arguments as a string holding the JSON object (OpenAI's wire shape, copied).
		var s string
		_ = json.Unmarshal(args, &s)
		s = strings.TrimSpace(s)
		if s == "" {
			c.Args = []byte("{}")
			break
		}
		v, err := decodeOne(s)
		if err != nil {
			if v2, err2 := decodeOne(repair(s)); err2 == nil {
				v, err = v2, nil
			}
		}
		if err != nil || v[0] != '{' {
			c.Err = "its \"arguments\" string does not hold a JSON object"
			return c
		}
		c.Args = v
	default:
		c.Err = "its \"arguments\" must be a JSON object"
		return c
	}
	return c
}

// repair rewrites the near-JSON small models write into JSON: single-quoted strings become
// double-quoted, a comma before a closing bracket goes, and True/False/None outside strings
// become true/false/null. Valid JSON comes back unchanged.
func repair(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			// Copy a double-quoted string whole.
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				b.WriteString(s[i:])
				return b.String()
			}
			b.WriteString(s[i : j+1])
			i = j
		case '\'':
			b.WriteByte('"')
			j := i + 1
			for ; j < len(s) && s[j] != '\''; j++ {
				switch {
				case s[j] == '\\' && j+1 < len(s) && s[j+1] == '\'':
					b.WriteByte('\'')
					j++
				case s[j] == '\\' && j+1 < len(s):
					b.WriteByte('\\')
					b.WriteByte(s[j+1])
					j++
				case s[j] == '"':
					b.WriteString(`\"`)
				case s[j] == '\n':
					b.WriteString(`\n`)
				default:
					b.WriteByte(s[j])
				}
			}
			b.WriteByte('"')
			i = j
		case ',':
			k := i + 1
			for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
				k++
			}
			if k < len(s) && (s[k] == '}' || s[k] == ']') {
				continue
			}
			b.WriteByte(c)
		case 'T', 'F', 'N':
			done := false
			for _, w := range [...][2]string{{"True", "true"}, {"False", "false"}, {"None", "null"}} {
				if strings.HasPrefix(s[i:], w[0]) && (i == 0 || !isWord(s[i-1])) && (i+len(w[0]) == len(s) || !isWord(s[i+len(w[0])])) {
					b.WriteString(w[1])
					i += len(w[0]) - 1
					done = true
					break
				}
			}
			if !done {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
