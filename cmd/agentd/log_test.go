package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"
)

func TestLoggerRedactsKeys(t *testing.T) {
	var buf bytes.Buffer
	log, closeLog, err := newLogger(&buf, "", "debug")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("calling with Authorization: Bearer abcdefghijklmnop",
		zap.String("apiKey", "plain"), zap.String("header", "x-api-key sk-ant-api03-abcdefghijklmnop"),
		zap.Error(errors.New("gemini refused key AIzaSyA1234567890abcdefghijklmnopqrstu")), zap.String("model", "sk-is-not-a-key"))
	log.With(zap.String("Authorization", "Basic dXNlcjpwYXNz")).Warn("with")
	closeLog()
	out := buf.String()
	for _, secret := range []string{"abcdefghijklmnop", "plain", "AIzaSyA1234567890", "dXNlcjpwYXNz"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q logged:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "sk-is-not-a-key") || !strings.Contains(out, `"msg":"with"`) {
		t.Errorf("ordinary text lost:\n%s", out)
	}
}

// secretKey agrees with the regular expression it stands in for.
func TestSecretKeyMatchesPattern(t *testing.T) {
	keys := []string{"", "apiKey", "API_KEY", "x-api-key", "api.key", "Authorization", "authorizationHeader",
		"clientSecret", "SECRET", "password", "passwd", "token", "Token", "tokens", "maxTokens", "bearer",
		"BearerToken", "model", "providerId", "keyStatus", "apikeyenv", "\u212apiKey", "api\u212aey",
		"\u017fecret", "ToKEN", "tok\u212an", "pass\u017fword", "é-secret", "api-kéy", "\u212a"}
	for _, k := range keys {
		if got, want := secretKey(k), secretField.MatchString(k); got != want {
			t.Errorf("secretKey(%q) = %v, the pattern says %v", k, got, want)
		}
	}
}

func FuzzSecretKey(f *testing.F) {
	for _, k := range []string{"apiKey", "token", "x-api_key", "\u212a", "Bearer"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, k string) {
		if got, want := secretKey(k), secretField.MatchString(k); got != want {
			t.Errorf("secretKey(%q) = %v, the pattern says %v", k, got, want)
		}
	})
}

// Issue 26 item 10: a key-shaped string in another case (a server that upper-cases what it
// echoes) is masked in the log as well.
func TestLogRedactsKeyInOtherCase(t *testing.T) {
	for _, s := range []string{"echo SK-ANT-API03-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "echo Sk-Proj-abcdefghijklmnopqrstuvwxyz", "aiza" + "SyABCDEFGHIJKLMNOPQRSTUVWXYZ0123"} {
		if got := redact(s); strings.Contains(got, "ABCDEFGHIJKLMNOPQRST") || strings.Contains(got, "abcdefghijklmnopqrst") {
			t.Errorf("redact(%q) = %q", s, got)
		}
	}
}
