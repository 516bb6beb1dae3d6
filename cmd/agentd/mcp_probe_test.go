package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The probe's browser approves a sign-in on the suite's loopback servers only: an authorization
// URL elsewhere, or a redirect that leaves loopback, is refused before any request goes there.
func TestProbeBrowserStaysOnLoopback(t *testing.T) {
	if err := probeBrowser(context.Background(), "http://example.com/authorize"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("a non-loopback authorization URL: err = %v; want a refusal", err)
	}
	if err := probeBrowser(context.Background(), "file:///etc/passwd"); err == nil {
		t.Error("a file URL was visited")
	}
	var reached bool
	back := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	defer back.Close()
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("to") == "away" {
			http.Redirect(w, r, "http://10.255.255.1/oauth/callback?code=x", http.StatusFound)
			return
		}
		http.Redirect(w, r, back.URL+"/oauth/callback?code=x", http.StatusFound)
	}))
	defer as.Close()
	if err := probeBrowser(context.Background(), as.URL+"/authorize?to=away"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("a redirect off loopback: err = %v; want a refusal", err)
	}
	if err := probeBrowser(context.Background(), as.URL+"/authorize"); err != nil || !reached {
		t.Errorf("a loopback redirect: err = %v, reached = %v; want the callback reached", err, reached)
	}
}
