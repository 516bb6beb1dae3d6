package completion

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		name, text, raw, want string
	}{
		{"mid-line: one line, the closing text not repeated", `fmt.Println(<|>)` + "\n", `"hi")` + "\nfoo()", `"hi"`},
		{"mid-line: a longer overlap", `call(<|>);` + "\n", `a, b);`, `a, b`},
		{"end of line: a block", "func f() {\n\t<|>\n}\n", "x := 1\n\treturn x\n}", "x := 1\n\treturn x"},
		{"a block stops at a blank line", "<|>\n", "a()\nb()\n\nc()", "a()\nb()"},
		{"a block stops at a line indented less", "if x {\n\t\t<|>\n", "y()\n\t\tz()\n\t}\n", "y()\n\t\tz()"},
		{"the next lines of the file are not repeated", "a := 1\n<|>\nc := 3\nd := 4\n", "b := 2\nc := 3\nd := 4", "b := 2"},
		{"whitespace only is empty", "x<|>\n", " \n\t\n", ""},
		{"only the repeated suffix is empty", "f(<|>)\n", ")", ""},
		{"CRLF answers", "<|>\r\n", "a\r\nb", "a\nb"},
		{"nothing after the cursor", "return <|>", "nil", "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix, suffix := split(tc.text)
			if got := Shape(tc.raw, prefix, suffix); got != tc.want {
				t.Errorf("Shape(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}

func TestShapeBoundsABlock(t *testing.T) {
	raw := strings.Repeat("x()\n", 100)
	if n := strings.Count(Shape(raw, "", "\n"), "\n") + 1; n != maxBlockLines {
		t.Errorf("%d lines, want %d", n, maxBlockLines)
	}
}

func TestUnfence(t *testing.T) {
	for raw, want := range map[string]string{
		"```go\nx := 1\n```": "x := 1",
		"```\na\nb\n```\n":   "a\nb",
		"plain":              "plain",
		"```":                "",
	} {
		if got := unfence(raw); got != want {
			t.Errorf("unfence(%q) = %q, want %q", raw, got, want)
		}
	}
}

// testLogger writes JSON log lines into b.
func testLogger(b *strings.Builder) *zap.Logger {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(writerFunc(func(p []byte) (int, error) { return b.Write(p) })), zap.DebugLevel))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
