package providers

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"
)

// Issue 26 item 10: a server that echoes the key back changed in case, or base64-encoded (alone,
// inside a Basic credential, or at any offset of a larger encoded blob), still gets it redacted.
func TestRedactCatchesCaseAndBase64Variants(t *testing.T) {
	const key = "sk-Live-AbCdEf0123456789xyz"
	variants := map[string]string{
		"upper":      strings.ToUpper(key),
		"lower":      strings.ToLower(key),
		"std":        base64.StdEncoding.EncodeToString([]byte(key)),
		"url":        base64.URLEncoding.EncodeToString([]byte(key)),
		"raw":        base64.RawStdEncoding.EncodeToString([]byte(key)),
		"basic":      base64.StdEncoding.EncodeToString([]byte("user:" + key)),
		"offset1":    base64.StdEncoding.EncodeToString([]byte("{" + key + "}")),
		"offset2":    base64.StdEncoding.EncodeToString([]byte(`{"` + key + `"}`)),
		"offset2url": base64.RawURLEncoding.EncodeToString([]byte(`{"k":"` + key + `"}`)),
	}
	for name, v := range variants {
		inner := streamOf{{Type: EventFailed, Err: &Error{Kind: ErrAuth, Message: "denied", Detail: `{"echo":"` + v + `"}`}}}
		var all string
		for ev := range Redact(inner, key).Stream(context.Background(), &Request{}) {
			if ev.Err != nil {
				all += ev.Err.Message + ev.Err.Detail
			}
		}
		if strings.Contains(all, v) || !strings.Contains(all, Redacted) {
			t.Errorf("%s: %q passed redaction: %q", name, v, all)
		}
	}
	// Plain text that merely shares short runs with the key is left alone.
	inner := streamOf{{Type: EventNotice, Text: "retrying in 2s (sk- prefix keys are fine)"}}
	for ev := range Redact(inner, key).Stream(context.Background(), &Request{}) {
		if ev.Text != "retrying in 2s (sk- prefix keys are fine)" {
			t.Errorf("ordinary text garbled: %q", ev.Text)
		}
	}
}
