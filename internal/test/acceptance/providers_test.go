package acceptance_test

// PROTOCOL.md "Client → agentd requests": agent/providers/list, set and test; "Settings": keys.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/editorbridge/fakeeditor"
	"github.com/agentd-dev/agentd/internal/test/fakemodel"
	"github.com/agentd-dev/agentd/protocol"
)

// fakeModel starts a scripted OpenAI-compatible server on 127.0.0.1 and returns it with its
// base URL (…/v1).
func fakeModel(t *testing.T, script fakemodel.Script) (*fakemodel.Server, string) {
	t.Helper()
	s := fakemodel.New(script)
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, url
}

// openaiSettings makes the fake model the default provider.
func openaiSettings(baseURL string, extra map[string]any) json.RawMessage {
	m := map[string]any{
		"provider":  "fm",
		"providers": map[string]any{"fm": map[string]any{"apiType": "openai", "baseUrl": baseURL, "model": fakemodel.ModelID}},
	}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

func (e *env) providers() map[string]protocol.ProviderInfo {
	e.t.Helper()
	var res struct {
		Providers []map[string]any `json:"providers"`
	}
	if err := e.ed.Call(ctxT(e.t), protocol.MethodProvidersList, map[string]any{}, &res); err != nil {
		e.t.Fatalf("providers/list: %v", err)
	}
	out := map[string]protocol.ProviderInfo{}
	for _, p := range res.Providers {
		for _, k := range []string{"providerId", "apiType", "baseUrl", "keyStatus"} {
			if _, ok := p[k].(string); !ok {
				e.t.Errorf("providers/list entry %v lacks %s", p, k)
			}
		}
		var pi protocol.ProviderInfo
		json.Unmarshal(mustMarshal(p), &pi)
		out[pi.ProviderID] = pi
	}
	return out
}

func TestProvidersListShape(t *testing.T) {
	t.Parallel()
	_, url := fakeModel(t, fakemodel.Script{})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	ps := e.providers()
	fm, ok := ps["fm"]
	if !ok {
		t.Fatalf("providers/list lacks fm: %v", ps)
	}
	if fm.APIType != "openai" || fm.BaseURL != url || fm.Model != fakemodel.ModelID {
		t.Errorf("fm = %+v", fm)
	}
	// A loopback server needs no key.
	if fm.KeyStatus != "not_needed" {
		t.Errorf("fm keyStatus = %q, want not_needed (loopback)", fm.KeyStatus)
	}
}

// providers/set: write-only headers, never echoed back on the wire.
func TestProvidersSetHeadersNeverEchoed(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	const secret = "sk-acceptance-secret-0123456789"
	var res map[string]any
	if err := e.ed.Call(ctxT(t), protocol.MethodProvidersSet, protocol.ProvidersSetParams{
		ProviderID: "gw", APIType: "openai", BaseURL: "https://gw.example/v1", Model: "m1",
		Headers: map[string]string{"Authorization": "Bearer " + secret},
	}, &res); err != nil {
		t.Fatalf("providers/set: %v", err)
	}
	if len(res) != 0 {
		t.Errorf("providers/set answered %v, want {}", res)
	}
	gw, ok := e.providers()["gw"]
	if !ok {
		t.Fatal("providers/list lacks the provider just set")
	}
	if gw.APIType != "openai" || gw.BaseURL != "https://gw.example/v1" || gw.Model != "m1" || gw.KeyStatus != "set" {
		t.Errorf("gw = %+v, want openai https://gw.example/v1 m1 keyStatus set", gw)
	}
	// Also in a new session's model options, the secret must not appear.
	e.newSession()
	for _, f := range e.sent() {
		if strings.Contains(string(mustMarshal(f)), "acceptance-secret") {
			t.Errorf("the header secret went back on the wire: %s", mustMarshal(f))
		}
	}
	if strings.Contains(e.p.raw.String(), "acceptance-secret") {
		t.Error("the header secret is on stdout")
	}
	if strings.Contains(e.p.stderr.String(), "acceptance-secret") {
		t.Error("the header secret is in the log")
	}
}

// providers/test: one GET of the model list; a 404 says "check the URL", not "bad key".
func TestProvidersTest(t *testing.T) {
	t.Parallel()
	fm, url := fakeModel(t, fakemodel.Script{})
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	var res protocol.ProvidersTestResult
	if err := e.ed.Call(ctxT(t), protocol.MethodProvidersTest, protocol.ProvidersTestParams{ProviderID: "fm"}, &res); err != nil {
		t.Fatalf("providers/test: %v", err)
	}
	if !res.OK || !slices.Contains(res.Models, fakemodel.ModelID) {
		t.Errorf("providers/test = %+v, want ok with %s", res, fakemodel.ModelID)
	}
	if len(fm.Requests()) != 0 {
		t.Errorf("providers/test made %d chat requests, want only the model list", len(fm.Requests()))
	}

	// The same server under a wrong path: GET …/wrong/models answers 404.
	if err := e.ed.Call(ctxT(t), protocol.MethodProvidersSet, protocol.ProvidersSetParams{
		ProviderID: "wrong", APIType: "openai", BaseURL: strings.TrimSuffix(url, "/v1") + "/wrong"}, nil); err != nil {
		t.Fatalf("providers/set: %v", err)
	}
	var raw map[string]any
	if err := e.ed.Call(ctxT(t), protocol.MethodProvidersTest, protocol.ProvidersTestParams{ProviderID: "wrong"}, &raw); err != nil {
		t.Fatalf("providers/test of a wrong URL must answer a result, not an error: %v", err)
	}
	if raw["ok"] != false {
		t.Errorf("wrong URL: ok = %v, want false", raw["ok"])
	}
	if _, isList := raw["models"].([]any); !isList {
		t.Errorf("wrong URL: models = %v, want a (empty) list", raw["models"])
	}
	msg, _ := raw["message"].(string)
	if !strings.Contains(strings.ToLower(msg), "check the url") || strings.Contains(strings.ToLower(msg), "key") {
		t.Errorf("wrong URL: message %q, want it to say check the URL and not blame the key", msg)
	}

	// An unknown provider is invalid params naming providerId.
	if code, msg := e.callError(protocol.MethodProvidersTest, protocol.ProvidersTestParams{ProviderID: "nobody"}); code != -32602 || !strings.Contains(msg, "providerId") {
		t.Errorf("providers/test of an unknown provider: %d %q, want -32602 naming providerId", code, msg)
	}
}

// headerServer answers GET …/v1/models on 127.0.0.1 and records each request's Authorization.
func headerServer(t *testing.T) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"m1","object":"model"}]}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(auth)
	}
}

// A loopback provider without a key gets no Authorization header; headers from providers/set
// are sent to that provider.
func TestProviderKeysAndHeaders(t *testing.T) {
	t.Parallel()
	url, auth := headerServer(t)
	e := start(t, fakeeditor.Full(), openaiSettings(url, nil))
	var res protocol.ProvidersTestResult
	if err := e.ed.Call(ctxT(t), protocol.MethodProvidersTest, protocol.ProvidersTestParams{ProviderID: "fm"}, &res); err != nil || !res.OK {
		t.Fatalf("providers/test: %+v %v", res, err)
	}
	if got := auth(); len(got) != 1 || got[0] != "" {
		t.Errorf("Authorization sent to a keyless loopback provider: %q", got)
	}
	if err := e.ed.Call(ctxT(t), protocol.MethodProvidersSet, protocol.ProvidersSetParams{ProviderID: "keyed", APIType: "openai", BaseURL: url,
		Headers: map[string]string{"Authorization": "Bearer sk-local-0123456789"}}, nil); err != nil {
		t.Fatalf("providers/set: %v", err)
	}
	if err := e.ed.Call(ctxT(t), protocol.MethodProvidersTest, protocol.ProvidersTestParams{ProviderID: "keyed"}, &res); err != nil || !res.OK {
		t.Fatalf("providers/test keyed: %+v %v", res, err)
	}
	if got := auth(); len(got) != 2 || got[1] != "Bearer sk-local-0123456789" {
		t.Errorf("the providers/set header did not reach its provider: %q", got)
	}
}

// Plain http is refused except to loopback and private addresses.
func TestPlainHTTPRefused(t *testing.T) {
	t.Parallel()
	e := start(t, fakeeditor.Full(), replay(t, responses()))
	var res json.RawMessage
	err := e.ed.Call(ctxT(t), protocol.MethodProvidersSet, protocol.ProvidersSetParams{ProviderID: "plain", APIType: "openai", BaseURL: "http://gw.example/v1"}, &res)
	if err == nil {
		// Accepted for later: it must then not be usable.
		var tr protocol.ProvidersTestResult
		if err := e.ed.Call(ctxT(t), protocol.MethodProvidersTest, protocol.ProvidersTestParams{ProviderID: "plain"}, &tr); err == nil && tr.OK {
			t.Fatal("a plain-http remote provider tested ok")
		}
		return
	}
	if code, msg := errorCode(t, err); code != -32602 || !strings.Contains(msg, "baseUrl") {
		t.Errorf("plain http remote: %d %q, want -32602 naming baseUrl", code, msg)
	}
}

// $/cancelRequest of a request other than a prompt answers it -32800, and the provider request
// it was making is abandoned.
func TestCancelRequestOfProvidersTest(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	gone := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	w, _ := startWire(t, openaiSettings(srv.URL+"/v1", nil))
	w.p.send(request(50, protocol.MethodProvidersTest, map[string]any{"providerId": "fm"}))
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("providers/test never reached the server")
	}
	w.p.send(notification("$/cancelRequest", map[string]any{"id": 50}))
	r := w.response(50)
	if code := obj(r, "error", "code"); code != float64(-32800) {
		t.Errorf("a cancelled providers/test answered %v, want error -32800", r)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Error("the model-list request was not abandoned after the cancel")
	}
}
