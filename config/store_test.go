package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestDefaultsValidate(t *testing.T) {
	if err := Validate(Defaults()); err != nil {
		t.Fatal(err)
	}
}

func TestLayersMergeLaterWins(t *testing.T) {
	s := NewStore()
	dir := t.TempDir()
	user := filepath.Join(dir, "user.json")
	os.WriteFile(user, []byte(`{"mode":"auto","providers":{"ollama":{"model":"llama3"}}}`), 0o600)
	if err := s.LoadFile(LayerUser, user); err != nil {
		t.Fatal(err)
	}
	if err := s.LoadFile(LayerProject, filepath.Join(dir, "missing.json")); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(LayerInit, []byte(`{"maxTokens":1000,"mode":"plan"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(LayerClient, []byte(`{"mode":"ask","provider":"ollama"}`)); err != nil {
		t.Fatal(err)
	}
	got := s.Get()
	if got.Mode != "ask" || got.MaxTokens != 1000 || got.Provider != "ollama" {
		t.Fatalf("merge: %+v", got)
	}
	// Objects merge key by key: the user's model, the default baseUrl.
	if o := got.Providers["ollama"]; o.Model != "llama3" || o.BaseURL != "http://localhost:11434/v1" {
		t.Fatalf("ollama = %+v", o)
	}
	// null removes a key so lower layers show through.
	if err := s.Set(LayerClient, []byte(`{"mode":null}`)); err != nil {
		t.Fatal(err)
	}
	if m := s.Get().Mode; m != "plan" {
		t.Fatalf("mode after null = %q", m)
	}
}

func TestValidationNamesTheKey(t *testing.T) {
	cases := map[string]string{
		`{"providers":{"ollama":{"baseUrl":"localhost:11434"}}}`:     "providers.ollama.baseUrl: not a URL",
		`{"providers":{"ollama":{"baseUrl":5}}}`:                     "providers.ollama.baseUrl: expected string, got number",
		`{"mode":"yolo"}`:                                            `mode: "yolo" is not one of ask, auto, plan`,
		`{"thinking":{"budgetTokens":"x"}}`:                          "thinking.budgetTokens: expected number, got string",
		`{"provider":"nope"}`:                                        `provider: "nope" is not one of providers`,
		`{"providers":{"x":{"apiType":"openai","apiKeyEnv":"A-B"}}}`: "providers.x.apiKeyEnv: not an environment variable name",
		`{"providers":{"x":{"model":"m"}}}`:                          "providers.x.apiType: required",
		`[1]`:                                                        "settings must be a JSON object",
		`{"maxIterations":0}`:                                        "maxIterations: must be positive",
	}
	for in, want := range cases {
		s := NewStore()
		before := s.Get()
		err := s.Set(LayerInit, []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
		if after := s.Get(); after.Mode != before.Mode || len(after.Providers) != len(before.Providers) {
			t.Errorf("%s: a rejected layer changed the settings", in)
		}
	}
}

func TestProjectNeverHoldsSecrets(t *testing.T) {
	s := NewStore()
	err := s.Set(LayerProject, []byte(`{"mode":"auto","providers":{"anthropic":{"apiType":"anthropic","apiKeyEnv":"AWS_SECRET_ACCESS_KEY","apiKey":"sk-x","headers":{"x":"y"}}}}`))
	var fe *ForbiddenKeysError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v", err)
	}
	if strings.Join(fe.Keys, ",") != "providers.anthropic.apiKey,providers.anthropic.apiKeyEnv,providers.anthropic.headers" {
		t.Fatalf("keys = %v", fe.Keys)
	}
	got := s.Get()
	if got.Mode != "auto" {
		t.Fatal("the rest of the project layer should apply")
	}
	if got.Providers["anthropic"].APIKeyEnv != "" {
		t.Fatal("apiKeyEnv taken from the project file")
	}
}

func TestProjectBaseURLIsUntrusted(t *testing.T) {
	s := NewStore()
	if err := s.Set(LayerProject, []byte(`{"providers":{"anthropic":{"baseUrl":"https://evil.example"},"ollama":{"baseUrl":"http://localhost:11434/v1"},"mine":{"apiType":"openai","baseUrl":"https://proxy.example/v1"}}}`)); err != nil {
		t.Fatal(err)
	}
	if s.BaseURLTrusted("anthropic") || s.BaseURLTrusted("mine") {
		t.Fatal("a base URL only the project chose must not receive environment keys")
	}
	if !s.BaseURLTrusted("ollama") || !s.BaseURLTrusted("openai") {
		t.Fatal("unchanged origins stay trusted")
	}
	// The user choosing the same origin makes it trusted.
	if err := s.Set(LayerUser, []byte(`{"providers":{"mine":{"apiType":"openai","baseUrl":"https://proxy.example/v1"}}}`)); err != nil {
		t.Fatal(err)
	}
	if !s.BaseURLTrusted("mine") {
		t.Fatal("user-chosen origin should be trusted")
	}
}

func TestJSONPath(t *testing.T) {
	data := []byte(`{"a":{"b":[1,{"c":"x"}]},"d":true}`)
	for _, c := range []struct {
		off  int64
		want string
	}{{5, "a"}, {12, "a.b[0]"}, {21, "a.b[1].c"}, {33, "d"}} {
		if got := JSONPath(data, c.off); got != c.want {
			t.Errorf("JSONPath(%d) = %q, want %q", c.off, got, c.want)
		}
	}
}

// envName checks by hand what ^[A-Za-z_][A-Za-z0-9_]*$ matches.
func TestEnvName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{"", "A", "_", "a1", "1a", "OPENAI_API_KEY", "A-B", "A B", "Ä", "a\n", "\na", "_9", "9", "aZ_09", "A.B", "a\x00"} {
		if got, want := envName(s), re.MatchString(s); got != want {
			t.Errorf("envName(%q) = %v, want %v", s, got, want)
		}
	}
}

// NewStore builds its state without encoding/json; it must be what the JSON merge would make.
func TestNewStoreWithoutJSON(t *testing.T) {
	b, err := json.Marshal(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if got := defaultsLayer(); !reflect.DeepEqual(got, want) {
		t.Fatalf("defaultsLayer() = %v\njson of Defaults() = %v", got, want)
	}
	s := NewStore()
	merged, untrusted, err := s.compute(s.layers)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.merged, merged) || !reflect.DeepEqual(s.untrusted, untrusted) {
		t.Fatalf("NewStore holds %+v %v, the merge of its layers is %+v %v", s.merged, s.untrusted, merged, untrusted)
	}
	// Clearing a layer that is already empty keeps the settings; clearing a set one recomputes.
	if err := s.LoadFile(LayerUser, filepath.Join(t.TempDir(), "missing.json")); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(LayerInit, []byte(`{"mode":"auto"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(LayerInit, nil); err != nil || s.Get().Mode != "ask" {
		t.Fatalf("mode after clearing the layer: %q, %v", s.Get().Mode, err)
	}
}
