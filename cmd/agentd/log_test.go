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
