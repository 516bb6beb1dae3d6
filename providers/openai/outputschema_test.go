package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/providertest"
)

type outputSchemaFixture struct {
	OutputSchema string                     `json:"outputSchema"`
	Path         string                     `json:"path"`
	Body         map[string]json.RawMessage `json:"body"`
	Absent       []string                   `json:"absent"`
}

// requestBody sends req through a provider of cfg to a local server and returns the body it got.
func requestBody(t *testing.T, cfg providers.Config, req *providers.Request) (string, map[string]json.RawMessage) {
	t.Helper()
	srv := newScripted(t, sseBody(`{"choices":[{"index":0,"delta":{"content":"{}"},"finish_reason":"stop"}]}`, `[DONE]`))
	if cfg.BaseURL == "" {
		cfg.BaseURL = srv.URL + "/v1"
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range p.Stream(context.Background(), req) {
	}
	reqs := srv.all()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	raw, _ := json.Marshal(reqs[0].body)
	var body map[string]json.RawMessage
	json.Unmarshal(raw, &body)
	return reqs[0].path, body
}

// Each server gets the schema the way its documentation says (testdata/textproto/constrained),
// and only that way: llama-server refuses json_schema and response_format together.
func TestOutputSchemaRequests(t *testing.T) {
	dir := filepath.Join(providertest.RepoRoot(t), "testdata", "textproto", "constrained")
	for _, name := range []string{"llama-server.request.json", "ollama.request.json"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			var f outputSchemaFixture
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			var schema json.RawMessage
			if f.Body["json_schema"] != nil {
				schema = f.Body["json_schema"]
			} else {
				var rf struct {
					JSONSchema struct {
						Schema json.RawMessage `json:"schema"`
					} `json:"json_schema"`
				}
				json.Unmarshal(f.Body["response_format"], &rf)
				schema = rf.JSONSchema.Schema
			}
			path, body := requestBody(t, providers.Config{ID: "local", APIType: "openai", Model: "m", OutputSchema: f.OutputSchema},
				&providers.Request{Model: "m", Messages: userSays("hi"), ResponseSchema: schema})
			if path != f.Path {
				t.Errorf("path %s, want %s", path, f.Path)
			}
			for k, want := range f.Body {
				if !jsonEqual(body[k], want) {
					t.Errorf("%s = %s\nwant %s", k, body[k], want)
				}
			}
			for _, k := range f.Absent {
				if _, ok := body[k]; ok {
					t.Errorf("%s was sent: %s", k, body[k])
				}
			}
		})
	}
}

// What must not happen: a schema sent to a server agentd does not know to enforce it (OpenAI
// itself would refuse a schema that is not strict-mode; an unknown server may fail the request),
// or to one the settings turned off; and a request without a schema carries neither field.
func TestOutputSchemaOnlyWhereKnown(t *testing.T) {
	schema := json.RawMessage(`{"anyOf":[{"type":"object"}]}`)
	for _, c := range []struct {
		name string
		cfg  providers.Config
		req  *providers.Request
	}{
		{"unknown server", providers.Config{ID: "local", APIType: "openai", Model: "m"}, &providers.Request{Model: "m", Messages: userSays("hi"), ResponseSchema: schema}},
		{"ollama preset id at another address", providers.Config{ID: "ollama", APIType: "openai", Model: "m"}, &providers.Request{Model: "m", Messages: userSays("hi"), ResponseSchema: schema}},
		{"turned off", providers.Config{ID: "local", APIType: "openai", Model: "m", OutputSchema: providers.OutputSchemaOff}, &providers.Request{Model: "m", Messages: userSays("hi"), ResponseSchema: schema}},
		{"no schema", providers.Config{ID: "local", APIType: "openai", Model: "m", OutputSchema: providers.OutputSchemaJSONSchema}, &providers.Request{Model: "m", Messages: userSays("hi")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, body := requestBody(t, c.cfg, c.req)
			if body["json_schema"] != nil || body["response_format"] != nil {
				t.Errorf("sent a schema: json_schema %s, response_format %s", body["json_schema"], body["response_format"])
			}
		})
	}
	// The presets, by their default addresses.
	for base, want := range map[string]string{
		"http://127.0.0.1:11434/v1": providers.OutputSchemaResponseFormat,
		"http://127.0.0.1:8080/v1":  providers.OutputSchemaJSONSchema,
		"http://127.0.0.1:1234/v1":  "",
		DefaultBaseURL:              "",
	} {
		if got := outputSchemaOf(providers.Config{ID: "x"}, base); got != want {
			t.Errorf("%s: %q, want %q", base, got, want)
		}
	}
}

// A server that refuses the field (a 400 naming it) gets the turn anyway, without it.
func TestRefusedOutputSchemaIsDropped(t *testing.T) {
	srv := newScripted(t,
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":{"message":"Unrecognized request argument supplied: response_format","type":"invalid_request_error","param":"response_format"}}`))
		},
		sseBody(`{"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`, `[DONE]`))
	p, err := New(providers.Config{ID: "local", APIType: "openai", BaseURL: srv.URL + "/v1", Model: "m", OutputSchema: providers.OutputSchemaResponseFormat})
	if err != nil {
		t.Fatal(err)
	}
	o := providertest.Collect(t, p.Stream(context.Background(), &providers.Request{Model: "m", Messages: userSays("hi"), ResponseSchema: json.RawMessage(`{"type":"object"}`)}))
	if o.Err != nil || o.Text != "hi" {
		t.Fatalf("text %q, err %v", o.Text, o.Err)
	}
	reqs := srv.all()
	if len(reqs) != 2 || reqs[0].body["response_format"] == nil || reqs[1].body["response_format"] != nil {
		t.Fatalf("requests: %+v", reqs)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func userSays(text string) []providers.Message {
	return []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: text}}}}
}
