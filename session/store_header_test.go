package session

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestHeaderRecordMatchesEncoder holds the hand-written first line of a session file to what
// sessionFile.write's encoder writes for the same record.
func TestHeaderRecordMatchesEncoder(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 59, 1, 123456789, time.UTC)
	cases := []header{
		{ID: "sess_abc", Cwd: "/p/q", Created: at},
		{ID: "sess_<&>", Cwd: "/p/\"é\"\u2028\x01\xff", Dirs: []string{"/a", "/b <c>"}, Created: at.Add(-time.Hour)},
		{ID: "sess_x", Cwd: "", Dirs: []string{}, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))},
	}
	for _, h := range cases {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(record{T: recHeader, At: at, Header: &h}); err != nil {
			t.Fatal(err)
		}
		got, err := appendHeaderRecord(nil, at, &h)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("header record:\n got %s\nwant %s", got, want.Bytes())
		}
	}
}

// TestInstructionFileMarshal holds instructionFile's MarshalJSON to encoding/json's output for
// the tagged fields.
func TestInstructionFileMarshal(t *testing.T) {
	type plain struct {
		Path  string `json:"path"`
		Bytes int    `json:"bytes"`
		Cut   bool   `json:"truncated,omitempty"`
	}
	for _, f := range []instructionFile{{Path: "/p/AGENTS.md", Bytes: 120}, {Path: "/p/<a>&\"b\"", Bytes: 0, Cut: true}} {
		want, _ := json.Marshal(plain{f.Path, f.Bytes, f.Cut})
		got, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	if got, _ := json.Marshal([]instructionFile{}); string(got) != "[]" {
		t.Errorf("empty list: %s", got)
	}
}
