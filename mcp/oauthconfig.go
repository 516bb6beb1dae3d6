package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/agentd-dev/agentd/mcp/mcpauth"
)

// OAuth is an HTTP server's entry key "oauth": a client registered beforehand with the server's
// authorization server, and what a sign-in asks for. The client is used only at Issuer (an
// authorization server whose metadata says that issuer), so its ID and secret go nowhere else.
type OAuth struct {
	ClientID string `json:"clientId,omitempty"`
	// Issuer is the authorization server the client is registered with; required with a
	// client ID.
	Issuer string `json:"issuer,omitempty"`
	// ClientSecret is the secret written in the entry; it stays out of Key, the logs and every
	// card. ClientSecretEnv names the environment variable that holds it instead, read at
	// the server's start (never from a project file: the user's environment is not the
	// project's to send to an issuer of its choosing).
	ClientSecret    string `json:"-"`
	ClientSecretEnv string `json:"clientSecretEnv,omitempty"`
	// ClientSecretKeyring says agentd keeps the secret (`agentd mcp secret NAME`: the OS
	// keyring, else the token file), filed by issuer and client ID; not from a project file
	// either.
	ClientSecretKeyring bool     `json:"clientSecretKeyring,omitempty"`
	Scopes              []string `json:"scopes,omitempty"`
	CallbackPort        int      `json:"callbackPort,omitempty"`
}

// String never shows the secret (a log line or an error that prints the entry).
func (o OAuth) String() string {
	secret := ""
	switch {
	case o.ClientSecret != "":
		secret = " secret " + Redacted
	case o.ClientSecretEnv != "":
		secret = " secret from $" + o.ClientSecretEnv
	case o.ClientSecretKeyring:
		secret = " secret kept by agentd"
	}
	return fmt.Sprintf("oauth{client %q at %q%s scopes %q port %d}", o.ClientID, o.Issuer, secret, o.Scopes, o.CallbackPort)
}

type wireOAuth struct {
	ClientID            *string  `json:"clientId"`
	ClientSecret        *string  `json:"clientSecret"`
	ClientSecretEnv     *string  `json:"clientSecretEnv"`
	ClientSecretKeyring *bool    `json:"clientSecretKeyring"`
	Issuer              *string  `json:"issuer"`
	Scopes              []string `json:"scopes"`
	CallbackPort        *float64 `json:"callbackPort"`
}

var oauthKeys = []string{"clientId", "clientSecret", "clientSecretEnv", "clientSecretKeyring", "issuer", "scopes", "callbackPort"}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseOAuth reads the "oauth" key of an http entry; bad names the failing sub-field.
func parseOAuth(raw json.RawMessage, bad func(sub, msg string) (Config, error)) (*OAuth, error) {
	fail := func(sub, msg string) (*OAuth, error) {
		_, err := bad("oauth"+sub, msg)
		return nil, err
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &keys) != nil || keys == nil {
		return fail("", "must be an object")
	}
	for k := range keys {
		if !slices.Contains(oauthKeys, k) {
			return fail("."+k, "unknown key (oauth has clientId, clientSecret, clientSecretEnv, clientSecretKeyring, issuer, scopes, callbackPort)")
		}
	}
	var w wireOAuth
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&w); err != nil {
		var te *json.UnmarshalTypeError
		if asTypeError(err, &te) {
			return fail("."+te.Field, "has the wrong type ("+te.Value+")")
		}
		return fail("", err.Error())
	}
	o := &OAuth{Scopes: w.Scopes}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	o.ClientID, o.ClientSecret, o.ClientSecretEnv, o.Issuer = str(w.ClientID), str(w.ClientSecret), str(w.ClientSecretEnv), str(w.Issuer)
	for _, f := range []struct{ name, v string }{{"clientId", o.ClientID}, {"clientSecret", o.ClientSecret}, {"issuer", o.Issuer}} {
		if strings.ContainsAny(f.v, "\r\n\x00") || len(f.v) > 2048 {
			return fail("."+f.name, "must be one line of at most 2048 bytes")
		}
	}
	o.ClientSecretKeyring = w.ClientSecretKeyring != nil && *w.ClientSecretKeyring
	if (o.ClientSecret != "" || o.ClientSecretEnv != "" || o.ClientSecretKeyring || o.Issuer != "") && o.ClientID == "" {
		return fail(".clientId", "required with clientSecret, clientSecretEnv, clientSecretKeyring or issuer")
	}
	if n := btoi(o.ClientSecret != "") + btoi(o.ClientSecretEnv != "") + btoi(o.ClientSecretKeyring); n > 1 {
		return fail(".clientSecret", "give one of clientSecret, clientSecretEnv, clientSecretKeyring")
	}
	if o.ClientSecretEnv != "" && !envName.MatchString(o.ClientSecretEnv) {
		return fail(".clientSecretEnv", "must be an environment variable's name")
	}
	if o.ClientID != "" {
		if o.Issuer == "" {
			return fail(".issuer", "required with clientId: the authorization server the client is registered with (its ID and secret go only there)")
		}
		u, err := url.Parse(o.Issuer)
		if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" ||
			(u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
			return fail(".issuer", fmt.Sprintf("%q is not an https URL (or http on a loopback address) without credentials, query or fragment", Clean(o.Issuer, 200)))
		}
	}
	if len(o.Scopes) > 32 {
		return fail(".scopes", "at most 32 scopes")
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r >= 0x7f }) {
			return fail(fmt.Sprintf(".scopes[%d]", i), "a scope is printable ASCII without spaces, quotes or backslashes")
		}
	}
	if w.CallbackPort != nil {
		p := *w.CallbackPort
		if p != float64(int(p)) || p < 1 || p > 65535 {
			return fail(".callbackPort", "must be a port number from 1 to 65535")
		}
		o.CallbackPort = int(p)
	}
	return o, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ParseProject parses an entry of a project file: as Parse, but an oauth client secret may not
// come from the user's environment (clientSecretEnv) or agentd's keyring (clientSecretKeyring),
// which a cloned repository could otherwise send to an authorization server of its choosing, or
// use for a resource of its choosing.
func ParseProject(field string, raw json.RawMessage) (Config, error) {
	c, err := Parse(field, raw)
	switch {
	case err != nil || c.OAuth == nil:
	case c.OAuth.ClientSecretEnv != "":
		return Config{}, &FieldError{Field: field + ".oauth.clientSecretEnv", Message: "a project file cannot read a secret from your environment; put this server in your user settings"}
	case c.OAuth.ClientSecretKeyring:
		return Config{}, &FieldError{Field: field + ".oauth.clientSecretKeyring", Message: "a project file cannot use a secret agentd keeps for you; put this server in your user settings"}
	}
	return c, err
}

// SecretEnvNames are the variables the user's entries name as oauth.clientSecretEnv: like a
// provider key's, they are hidden from every program agentd starts (a stdio server, a tool's
// program, a hook), whose output could carry the secret into the transcript. Malformed entries
// are skipped (their start reports them).
func SecretEnvNames(entries []json.RawMessage) []string {
	var out []string
	for _, raw := range entries {
		if c, err := Parse("", raw); err == nil && c.OAuth != nil && c.OAuth.ClientSecretEnv != "" && !slices.Contains(out, c.OAuth.ClientSecretEnv) {
			out = append(out, c.OAuth.ClientSecretEnv)
		}
	}
	return out
}

// oauthClient is the entry's client for mcpauth, its secret read from the environment when the
// entry names a variable; nil when the entry has no oauth.
func (c Config) oauthClient() (*mcpauth.Client, error) {
	o := c.OAuth
	if o == nil {
		return nil, nil
	}
	out := &mcpauth.Client{Issuer: o.Issuer, ID: o.ClientID, Secret: o.ClientSecret, SecretStored: o.ClientSecretKeyring, Scopes: o.Scopes, CallbackPort: o.CallbackPort}
	if o.ClientSecretEnv != "" {
		v, ok := os.LookupEnv(o.ClientSecretEnv)
		if !ok || v == "" {
			return nil, fmt.Errorf("its oauth.clientSecretEnv names %s, which is not set", o.ClientSecretEnv)
		}
		out.Secret = v
	}
	return out, nil
}
