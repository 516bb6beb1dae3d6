package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds one tool call when the server's entry sets no timeout.
const DefaultTimeout = 60 * time.Second

// Config is one server, as the client's session/new or the user settings name it (ACP
// McpServer: stdio {name, command, args, env[]}, {type:"http", name, url, headers[]}).
type Config struct {
	Name    string
	Type    string // "stdio" or "http"
	Command string
	Args    []string
	Env     []NameValue
	URL     string
	Headers []NameValue
	// SSE says an http server speaks the old HTTP+SSE transport (2024-11-05), entry type "sse".
	SSE bool
	// Timeout bounds one call on this server (entry key "timeout", in seconds).
	Timeout time.Duration
	// OAuth is an http entry's "oauth" (oauthconfig.go); nil without one.
	OAuth *OAuth `json:",omitempty"`
}

// NameValue is an ACP EnvVariable or HttpHeader.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// FieldError is a malformed entry; Field is its JSON path, such as mcpServers[1].command.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Key identifies a configuration: sessions that name the same server the same way share one
// connection.
func (c Config) Key() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// Target is what the user approves or reads in a log: the command line or the URL.
func (c Config) Target() string {
	if c.Type == "http" {
		return c.URL
	}
	return strings.Join(append([]string{c.Command}, c.Args...), " ")
}

type wireConfig struct {
	Name    *string         `json:"name"`
	Type    *string         `json:"type"`
	Command *string         `json:"command"`
	Args    []string        `json:"args"`
	Env     json.RawMessage `json:"env"`
	URL     *string         `json:"url"`
	Headers json.RawMessage `json:"headers"`
	Timeout *float64        `json:"timeout"`
	OAuth   json.RawMessage `json:"oauth"`
}

var knownKeys = []string{"name", "type", "command", "args", "env", "url", "headers", "timeout", "oauth", "_meta"}

// ParseList parses a list of entries; field is the list's path (mcpServers). The first
// malformed entry is the error.
func ParseList(field string, list []json.RawMessage) ([]Config, error) {
	out := make([]Config, 0, len(list))
	for i, raw := range list {
		c, err := Parse(fmt.Sprintf("%s[%d]", field, i), raw)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Parse parses one entry; field is its path, used in the error.
func Parse(field string, raw json.RawMessage) (Config, error) {
	bad := func(sub, msg string) (Config, error) {
		if sub != "" {
			sub = "." + sub
		}
		return Config{}, &FieldError{Field: field + sub, Message: msg}
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil || keys == nil {
		return bad("", "must be an object")
	}
	for k := range keys {
		if !slices.Contains(knownKeys, k) {
			return bad(k, "unknown key (an MCP server has name, type, command, args, env, url, headers, timeout, oauth)")
		}
	}
	var w wireConfig
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&w); err != nil {
		var te *json.UnmarshalTypeError
		if ok := asTypeError(err, &te); ok {
			return bad(te.Field, "has the wrong type ("+te.Value+")")
		}
		return bad("", err.Error())
	}
	c := Config{Timeout: DefaultTimeout}
	if w.Name == nil || strings.TrimSpace(*w.Name) == "" {
		return bad("name", "required")
	}
	c.Name = *w.Name
	if Clean(c.Name, maxLabel) != c.Name || strings.ContainsAny(c.Name, ":/") {
		return bad("name", "must be one line of printable characters without ':' or '/', at most 64 bytes")
	}
	if w.Timeout != nil {
		if *w.Timeout <= 0 || *w.Timeout > 3600 {
			return bad("timeout", "must be a number of seconds between 0 and 3600")
		}
		c.Timeout = time.Duration(*w.Timeout * float64(time.Second))
	}
	typ := "stdio"
	if w.Type != nil {
		typ = *w.Type
	}
	switch typ {
	case "stdio":
		c.Type = "stdio"
		if w.Command == nil || *w.Command == "" {
			return bad("command", "required for a stdio server")
		}
		if w.URL != nil || w.Headers != nil {
			return bad("url", "a stdio server has no url or headers (set type \"http\")")
		}
		if w.OAuth != nil {
			return bad("oauth", "only an http server signs in")
		}
		c.Command, c.Args = *w.Command, w.Args
		env, err := nameValues(w.Env)
		if err != nil {
			return bad("env", err.Error())
		}
		c.Env = env
	case "http", "sse":
		c.Type, c.SSE = "http", typ == "sse"
		if w.URL == nil || *w.URL == "" {
			return bad("url", "required for an http server")
		}
		if w.Command != nil || w.Args != nil || w.Env != nil {
			return bad("command", "an http server has no command, args or env")
		}
		u, err := url.Parse(*w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("url", fmt.Sprintf("%q is not an http(s) URL", *w.URL))
		}
		if u.User != nil {
			return bad("url", "must not carry credentials; send them in headers")
		}
		if u.Scheme == "http" && len(w.Headers) > 0 && string(w.Headers) != "[]" && !isLoopback(u.Hostname()) {
			return bad("url", "plain http would send the headers in cleartext; use https (or a loopback address)")
		}
		c.URL = *w.URL
		h, err := nameValues(w.Headers)
		if err != nil {
			return bad("headers", err.Error())
		}
		c.Headers = h
		if len(w.OAuth) > 0 && string(w.OAuth) != "null" {
			if c.SSE {
				return bad("oauth", "only a Streamable HTTP server (type \"http\") signs in")
			}
			if hasHeader(c.Headers, "Authorization") {
				return bad("oauth", "this server sends its own Authorization header, so it does not sign in")
			}
			o, err := parseOAuth(w.OAuth, bad)
			if err != nil {
				return Config{}, err
			}
			c.OAuth = o
		}
	default:
		return bad("type", fmt.Sprintf("%q is not one of stdio, http, sse", typ))
	}
	return c, nil
}

func nameValues(raw json.RawMessage) ([]NameValue, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, fmt.Errorf("must be an array of {name, value}")
	}
	out := make([]NameValue, 0, len(list))
	for i, m := range list {
		var nv NameValue
		if json.Unmarshal(m["name"], &nv.Name) != nil || nv.Name == "" {
			return nil, fmt.Errorf("[%d].name is required (a string)", i)
		}
		if json.Unmarshal(m["value"], &nv.Value) != nil {
			return nil, fmt.Errorf("[%d].value is required (a string)", i)
		}
		if strings.ContainsAny(nv.Name, "=\r\n\x00") || strings.ContainsAny(nv.Value, "\r\n\x00") {
			return nil, fmt.Errorf("[%d] contains a line break, NUL or '=' in its name", i)
		}
		out = append(out, nv)
	}
	return out, nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

// Redacted stands for a secret value on a permission card.
const Redacted = "[redacted]"

// secretName reports whether a header or variable of this name usually carries a credential:
// its value is not shown, its name is.
func secretName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie", "set-cookie":
		return true
	}
	for _, w := range []string{"token", "secret", "key", "passw", "auth", "credential", "session", "cookie"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// Shown is the entry's env and headers as a permission card shows them: every name, each value
// cleaned to one line, a secret's value Redacted. A start request hides nothing the server would
// run with: a PYTHONPATH or NODE_OPTIONS in env runs code of the project's choosing.
func (c Config) Shown() (env, headers []NameValue) {
	show := func(in []NameValue) []NameValue {
		out := make([]NameValue, 0, len(in))
		for _, nv := range in {
			v := Clean(nv.Value, 500)
			if secretName(nv.Name) {
				v = Redacted
			}
			out = append(out, NameValue{Name: Clean(nv.Name, 128), Value: v})
		}
		return out
	}
	return show(c.Env), show(c.Headers)
}
