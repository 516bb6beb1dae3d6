package mcp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseACPShapes(t *testing.T) {
	list := []json.RawMessage{
		json.RawMessage(`{"name":"fs","command":"npx","args":["-y","srv"],"env":[{"name":"TOKEN","value":"t"}]}`),
		json.RawMessage(`{"type":"http","name":"docs","url":"https://example.com/mcp","headers":[{"name":"Authorization","value":"Bearer x"}],"timeout":5}`),
	}
	cfgs, err := ParseList("mcpServers", list)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfgs[0]; c.Type != "stdio" || c.Target() != "npx -y srv" || c.Env[0] != (NameValue{"TOKEN", "t"}) || c.Timeout != DefaultTimeout {
		t.Errorf("stdio = %+v", c)
	}
	if c := cfgs[1]; c.Type != "http" || c.URL != "https://example.com/mcp" || c.Headers[0].Value != "Bearer x" || c.Timeout != 5*time.Second {
		t.Errorf("http = %+v", c)
	}
}

func TestParseNamesTheField(t *testing.T) {
	for _, c := range []struct{ entry, field string }{
		{`"x"`, "mcpServers[0]"},
		{`{"command":"x"}`, "mcpServers[0].name"},
		{`{"name":"a"}`, "mcpServers[0].command"},
		{`{"name":"a","command":5}`, "mcpServers[0].command"},
		{`{"name":"a","command":"x","env":{"A":"b"}}`, "mcpServers[0].env"},
		{`{"name":"a","command":"x","env":[{"name":"A"}]}`, "mcpServers[0].env"},
		{`{"type":"http","name":"a"}`, "mcpServers[0].url"},
		{`{"type":"http","name":"a","url":"ftp://x"}`, "mcpServers[0].url"},
		{`{"type":"http","name":"a","url":"https://u:p@x"}`, "mcpServers[0].url"},
		{`{"type":"http","name":"a","url":"http://example.com","headers":[{"name":"K","value":"v"}]}`, "mcpServers[0].url"},
		{`{"name":"a\nb","command":"x"}`, "mcpServers[0].name"},
		{`{"name":"a","command":"x","comand":"y"}`, "mcpServers[0].comand"},
		{`{"name":"a","command":"x","timeout":-1}`, "mcpServers[0].timeout"},
	} {
		_, err := ParseList("mcpServers", []json.RawMessage{json.RawMessage(c.entry)})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: error %v, want one naming %s", c.entry, err, c.field)
		}
	}
}

func TestCleanFlattensAndCaps(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb\r\n\tc":                 "a b c",
		"red\x1b[31mtext\x1b[0m":      "redtext",
		"title\x1b]0;pwned\x07 after": "title after",
		"rtl\u202eevil\u200b":         "rtlevil",
		"  lead and trail  ":          "lead and trail",
	} {
		if got := Clean(in, 100); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("é", 300)
	if got := Clean(long, 200); len([]rune(got)) != 200 || !strings.HasSuffix(got, "…") {
		t.Errorf("Clean cut to %d characters", len([]rune(got)))
	}
}

func TestResultsConvert(t *testing.T) {
	set, _ := open(t, stdioConfig("hostile", "-many", "0"))
	reg := set.Snapshot(t.Context())
	mixed := run(t, reg, "mixed", `{}`)
	for _, want := range []string{"some text", "[image 1 of this result (image/png) follows]", `<resource uri="file:///x.txt">`, "embedded body", "[an image of type image/svg+xml, which models do not read, was left out]"} {
		if !strings.Contains(mixed.Output, want) {
			t.Errorf("mixed result lacks %q:\n%s", want, mixed.Output)
		}
	}
	if len(mixed.Images) != 1 || mixed.Images[0].MimeType != "image/png" || string(mixed.Images[0].Data) != "\x89PNG...." {
		t.Errorf("mixed result's images = %+v, want the one PNG", mixed.Images)
	}
	if strings.Contains(mixed.Output, "\x1b") {
		t.Error("an escape reached the result")
	}
	if s := run(t, reg, "structured", `{}`); s.IsError || !strings.Contains(s.Output, `"answer": 42`) {
		t.Errorf("structured = %+v", s)
	}
	big := run(t, reg, "big", `{}`)
	if !strings.Contains(big.Output, "[result truncated") || strings.Count(big.Output, "\n") > maxResultLines+1 {
		t.Errorf("big result not capped: %d lines", strings.Count(big.Output, "\n"))
	}
}
