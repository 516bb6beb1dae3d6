package main

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger builds the daemon's logger: JSON lines to stderr (or a file), the level from the
// flag or AGENTD_LOG, no sampling, and a core that redacts secret-looking fields as a last line
// of defence (nothing should log a key in the first place).
func newLogger(stderr io.Writer, file, level string) (*zap.Logger, func(), error) {
	lvl := zap.NewAtomicLevelAt(zap.InfoLevel)
	if level != "" {
		if err := lvl.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
			return nil, nil, fmt.Errorf("log level %q is not one of debug, info, warn, error", level)
		}
	}
	var sink zapcore.WriteSyncer = zapcore.AddSync(stderr)
	closeFn := func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		sink = f
		closeFn = func() { _ = f.Sync(); _ = f.Close() }
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = utcTime
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.Lock(sink), lvl)
	log := zap.New(redactCore{core}, zap.ErrorOutput(zapcore.Lock(zapcore.AddSync(stderr))))
	return log, func() { _ = log.Sync(); closeFn() }, nil
}

// utcTime writes a log line's time in UTC (ISO 8601, "Z"): the same instant in every log a user
// sends, whatever the machine's zone, and no time zone file to load and parse at the first log
// line of every start (which, deep in zap's encoder, also grew the stack).
func utcTime(t time.Time, enc zapcore.PrimitiveArrayEncoder) {
	zapcore.ISO8601TimeEncoder(t.UTC(), enc)
}

// secretField matches a field name that says it holds a secret (secretKey screens the usual
// names first, without it).
var secretField = regexp.MustCompile(`(?i)(api[-_]?key|authorization|secret|password|^token$|bearer)`)

// secretValue matches key-shaped strings that slipped into a message or field.
var secretValue = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}|\b(sk|sk-ant|sk-proj|AIza)[-_A-Za-z0-9]{20,}`)

// secretKey reports whether a field's name says it holds a secret, as secretField matches it.
// Every field name agentd logs is ASCII, and for those the test is a few substring checks on the
// lower-cased name; anything else goes to the regular expression, whose (?i) also folds non-ASCII
// letters such as the Kelvin sign.
func secretKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if k[i] >= utf8.RuneSelf {
			return secretField.MatchString(k)
		}
	}
	l := strings.ToLower(k)
	if l == "token" {
		return true
	}
	for _, w := range [...]string{"apikey", "api-key", "api_key", "authorization", "secret", "password", "bearer"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// mayHoldSecret is a cheap screen before the regular expression: every pattern secretValue
// matches contains, in any case (its (?i) folds the prefixes too, and a server may echo a key
// upper-cased): "sk", "aiza" or "bearer".
func mayHoldSecret(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "sk") || strings.Contains(l, "aiza") || strings.Contains(l, "bearer")
}

func redact(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return secretValue.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(strings.ToLower(m), "bearer") {
			return "Bearer [redacted]"
		}
		return "[redacted]"
	})
}

// redactCore drops the value of secret-named fields and masks key-shaped strings.
type redactCore struct{ zapcore.Core }

func (c redactCore) With(fields []zapcore.Field) zapcore.Core {
	return redactCore{c.Core.With(redactFields(fields))}
}

func (c redactCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c redactCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = redact(e.Message)
	return c.Core.Write(e, redactFields(fields))
}

func redactFields(fields []zapcore.Field) []zapcore.Field {
	var out []zapcore.Field
	for i, f := range fields {
		nf := f
		switch {
		case secretKey(f.Key):
			nf = zap.String(f.Key, "[redacted]")
		case f.Type == zapcore.StringType:
			if r := redact(f.String); r != f.String {
				nf = zap.String(f.Key, r)
			}
		case f.Type == zapcore.ErrorType:
			if err, ok := f.Interface.(error); ok {
				if r := redact(err.Error()); r != err.Error() {
					nf = zap.String(f.Key, r)
				}
			}
		}
		if nf != f && out == nil {
			out = append([]zapcore.Field(nil), fields...)
		}
		if out != nil {
			out[i] = nf
		}
	}
	if out == nil {
		return fields
	}
	return out
}
