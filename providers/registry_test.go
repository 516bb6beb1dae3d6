package providers

import (
	"context"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/config"
)

type nopProvider struct{ cfg Config }

func (nopProvider) Stream(context.Context, *Request) iter.Seq[Event] {
	return func(func(Event) bool) {}
}

func testRegistry(built *int) *Registry {
	reg := NewRegistry()
	newP := func(cfg Config) (Provider, error) {
		if built != nil {
			*built++
		}
		return &nopProvider{cfg}, nil
	}
	reg.Register(Dialect{APIType: "openai", New: newP, DefaultBaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY", NeedsNetwork: true,
		Presets: []Preset{
			{ID: "ollama", BaseURL: "http://127.0.0.1:11434/v1"},
			{ID: "openrouter", BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY"},
		}})
	reg.Register(Dialect{APIType: "anthropic", New: newP, DefaultBaseURL: "https://api.anthropic.com", KeyEnv: "ANTHROPIC_API_KEY", NeedsNetwork: true})
	reg.Register(Dialect{APIType: "gemini", New: newP, DefaultBaseURL: "https://generativelanguage.googleapis.com", KeyEnv: "GEMINI_API_KEY", NeedsNetwork: true})
	reg.Register(Dialect{APIType: "replay", New: newP})
	return reg
}

// TestTargetKeyBoundToOrigin: a conventional variable only at its vendor's origin, a preset's
// only at the preset's, apiKeyEnv wherever the user put it; a key is required only at the
// vendors' own origins.
func TestTargetKeyBoundToOrigin(t *testing.T) {
	reg := testRegistry(nil)
	cases := []struct {
		id   string
		ps   config.ProviderSettings
		base string
		env  string
		need KeyNeed
	}{
		{"openai", config.ProviderSettings{APIType: "openai"}, "https://api.openai.com/v1", "OPENAI_API_KEY", KeyRequired},
		{"x", config.ProviderSettings{APIType: "openai", BaseURL: "https://api.openai.com:443/v1/"}, "https://api.openai.com:443/v1/", "OPENAI_API_KEY", KeyRequired},
		{"claude", config.ProviderSettings{APIType: "anthropic"}, "https://api.anthropic.com", "ANTHROPIC_API_KEY", KeyRequired},
		{"g", config.ProviderSettings{APIType: "gemini"}, "https://generativelanguage.googleapis.com", "GEMINI_API_KEY", KeyRequired},
		{"openrouter", config.ProviderSettings{APIType: "openai"}, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", KeyExpected},
		{"router", config.ProviderSettings{APIType: "openai", BaseURL: "https://openrouter.ai/api/v1"}, "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", KeyExpected},
		{"lan", config.ProviderSettings{APIType: "openai", BaseURL: "https://gw.example/v1"}, "https://gw.example/v1", "", KeyExpected},
		{"lan2", config.ProviderSettings{APIType: "openai", BaseURL: "https://gw.example/v1", APIKeyEnv: "GW_KEY"}, "https://gw.example/v1", "GW_KEY", KeyExpected},
		{"proxy", config.ProviderSettings{APIType: "anthropic", BaseURL: "https://proxy.example"}, "https://proxy.example", "", KeyExpected},
		{"ollama", config.ProviderSettings{APIType: "openai"}, "http://127.0.0.1:11434/v1", "", KeyNotNeeded},
	}
	for _, c := range cases {
		tg, err := reg.Target(c.id, c.ps)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if tg.BaseURL != c.base || tg.KeyEnv != c.env || tg.Endpoint.KeyNeed != c.need {
			t.Errorf("%s: base %q env %q need %v, want %q %q %v", c.id, tg.BaseURL, tg.KeyEnv, tg.Endpoint.KeyNeed, c.base, c.env, c.need)
		}
	}
}

// TestSettingsCheckEndpointsWhenRead: with the dialects attached, a settings layer with a bad
// endpoint or apiType fails when it is set, naming the key; a replay script is a file.
func TestSettingsCheckEndpointsWhenRead(t *testing.T) {
	st := config.NewStore()
	if err := st.UseDialects(testRegistry(nil)); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		`{"providers":{"x":{"apiType":"nope"}}}`:                                            `providers.x.apiType: unknown apiType "nope"`,
		`{"providers":{"x":{"apiType":"openai","baseUrl":"http://gpu.example/v1"}}}`:        "providers.x.baseUrl: agentd refuses plain http to gpu.example",
		`{"providers":{"x":{"apiType":"openai","baseUrl":"http://gpu-box:11434/v1"}}}`:      "only by its address",
		`{"providers":{"x":{"apiType":"openai","baseUrl":"https://u:sk-1@gw.example/v1"}}}`: "providers.x.baseUrl: the base URL",
		`{"providers":{"x":{"apiType":"openai","baseUrl":"gw.example/v1"}}}`:                "must start with https://",
		`{"providers":{"r":{"apiType":"replay","baseUrl":"https://example.com/s.json"}}}`:   "providers.r.baseUrl: a replay provider reads a local file",
	}
	for in, want := range bad {
		err := st.Set(config.LayerUser, []byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "sk-1") {
			t.Errorf("the error repeats the password: %v", err)
		}
	}
	for _, ok := range []string{`"/tmp/script.json"`, `"file:///tmp/script.json"`, `"script.jsonl"`} {
		if err := st.Set(config.LayerUser, []byte(`{"providers":{"r":{"apiType":"replay","baseUrl":`+ok+`}}}`)); err != nil {
			t.Errorf("replay baseUrl %s refused: %v", ok, err)
		}
	}
}

func TestRegistryKeepsOneProviderPerConfig(t *testing.T) {
	built := 0
	reg := testRegistry(&built)
	cfg := Config{ID: "a", APIType: "openai", BaseURL: "https://api.openai.com/v1", Model: "m", APIKey: "k", Headers: map[string]string{"X": "1"}}
	p1, _ := reg.New(cfg)
	p2, _ := reg.New(cfg)
	if p1 != p2 || built != 1 {
		t.Fatalf("two providers for one configuration (built %d)", built)
	}
	cfg.APIKey = "k2"
	if p3, _ := reg.New(cfg); p3 == p1 || built != 2 {
		t.Fatal("a new key reused the old provider")
	}
}

func TestKeyEnvNames(t *testing.T) {
	reg := testRegistry(nil)
	s := config.Defaults()
	s.Providers["lan"] = config.ProviderSettings{APIType: "openai", BaseURL: "https://gw.example/v1", APIKeyEnv: "GW_KEY"}
	got := reg.KeyEnvNames(s)
	for _, want := range append([]string{"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GW_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"}, VendorKeyEnv...) {
		if !slices.Contains(got, want) {
			t.Errorf("KeyEnvNames lacks %s: %v", want, got)
		}
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Fatalf("KeyEnvNames is not sorted and unique: %v", got)
	}
}

func TestRedactKeepsKeysOutOfMessages(t *testing.T) {
	inner := streamOf{{Type: EventNotice, Text: "retrying with key sk-abcdef"},
		{Type: EventFailed, Err: &Error{Kind: ErrAuth, Message: "bad key sk-abcdef", Detail: `{"auth":"Bearer sk-abcdef"}`}}}
	var all string
	for ev := range Redact(inner, "sk-abcdef", "x").Stream(context.Background(), &Request{}) {
		all += ev.Text
		if ev.Err != nil {
			all += ev.Err.Message + ev.Err.Detail
		}
	}
	if strings.Contains(all, "sk-abcdef") || strings.Count(all, Redacted) != 3 {
		t.Fatalf("redacted = %q", all)
	}
}

type streamOf []Event

func (s streamOf) Stream(context.Context, *Request) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for _, ev := range s {
			if !yield(ev) {
				return
			}
		}
	}
}
