package config

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// urlDialects stands in for providers.Registry: it checks a baseUrl's syntax only.
type urlDialects struct{}

func (urlDialects) CheckProvider(id string, p ProviderSettings) error {
	if p.BaseURL == "" {
		return nil
	}
	if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &KeyError{Key: "baseUrl", Msg: "not a URL"}
	}
	return nil
}

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
	// Objects merge key by key: the user's model, the default apiType.
	if o := got.Providers["ollama"]; o.Model != "llama3" || o.APIType != "openai" {
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
		`{"providers":{"ollama":{"baseUrl":"localhost:11434"}}}`:      "providers.ollama.baseUrl: not a URL",
		`{"providers":{"local":{"apiType":"openai","base_url":"x"}}}`: "providers.local.base_url: unknown key (did you mean baseUrl?)",
		`{"maxIteratons":3}`:                                         "maxIteratons: unknown key (did you mean maxIterations?)",
		`{"mdoe":"ask"}`:                                             "mdoe: unknown key (did you mean mode?)",
		`{"thinking":{"budget":1}}`:                                  "thinking.budget: unknown key",
		`{"trustedProjects":["rel/dir"]}`:                            `trustedProjects[0]: "rel/dir" is not an absolute path`,
		`{"providers":{"ollama":{"baseUrl":5}}}`:                     "providers.ollama.baseUrl: expected string, got number",
		`{"mode":"yolo"}`:                                            `mode: "yolo" is not one of ask, auto, plan`,
		`{"thinking":{"budgetTokens":"x"}}`:                          "thinking.budgetTokens: expected number, got string",
		`{"provider":"nope"}`:                                        `provider: "nope" is not one of providers`,
		`{"providers":{"x":{"apiType":"openai","apiKeyEnv":"A-B"}}}`: "providers.x.apiKeyEnv: not an environment variable name",
		`{"providers":{"x":{"model":"m"}}}`:                          "providers.x.apiType: required",
		`[1]`:                                                        "settings must be a JSON object",
		`{"maxIterations":0}`:                                        "maxIterations: must be positive",
		`{"providers":{"x":{"apiType":"openai","toolCalling":"json"}}}`:                `providers.x.toolCalling: "json" is not one of "native", "text", "none"`,
		`{"providers":{"x":{"apiType":"openai","capabilities":{"vision":true}}}}`:      "providers.x.capabilities.vision: unknown key",
		`{"providers":{"x":{"apiType":"openai","capabilities":{"images":"yes"}}}}`:     "providers.x.capabilities.images: expected boolean, got string",
		`{"providers":{"x":{"apiType":"openai","capabilities":{"contextWindow":-1}}}}`: "providers.x.capabilities.contextWindow: must not be negative",
	}
	for in, want := range cases {
		s := NewStore()
		if err := s.UseDialects(urlDialects{}); err != nil {
			t.Fatal(err)
		}
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
	merged, err := decodeJSON(mergeAll(s.layers))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.merged, merged) {
		t.Fatalf("NewStore holds %+v, the merge of its layers is %+v", s.merged, merged)
	}
	if shortcut, err := decodeMerge(s.layers); err != nil || !reflect.DeepEqual(shortcut, merged) {
		t.Fatalf("decodeMerge of the defaults alone = %+v, %v; through JSON %+v", shortcut, err, merged)
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

// TestStartTakesNoJSON holds the daemon's start (NewStore, UseDialects, a missing user file) to
// the merge without JSON: with it, reflecting Settings for encoding/json is about ten times the
// allocations.
func TestStartTakesNoJSON(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	start := testing.AllocsPerRun(20, func() {
		s := NewStore()
		if err := s.UseDialects(urlDialects{}); err != nil {
			t.Fatal(err)
		}
		if err := s.LoadFile(LayerUser, missing); err != nil {
			t.Fatal(err)
		}
	})
	viaJSON := testing.AllocsPerRun(20, func() {
		if _, err := decodeJSON(defaultsLayer()); err != nil {
			t.Fatal(err)
		}
	})
	if start*3 > viaJSON {
		t.Fatalf("a start without settings files allocates %v times, decoding the defaults through JSON %v: the start decodes JSON", start, viaJSON)
	}
}
