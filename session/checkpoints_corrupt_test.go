package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/protocol"
)

// cpLog builds a checkpoint log: one pre-image blob and an index naming it.
func cpLog(id, before string) string {
	head, _ := json.Marshal(cpRecord{Blob: 1, Len: len(before)})
	ix, _ := json.Marshal(cpRecord{Index: &cpIndex{ID: id, Prompt: "p " + id, Files: []cpFile{{Path: "/x/" + id, Change: changeModified, BeforeKnown: true, Blob: 1}}}})
	return string(head) + "\n" + before + string(ix) + "\n"
}

// Issue 26 item 10: a checkpoint log whose record claims a huge (or negative) length is refused
// with an error naming the record, without allocating it, and what came before it is kept; a
// log that is a link (here to one outside the state directory) is refused, never followed.
func TestCorruptCheckpointLogIsRefusedNotFatal(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1-huge.log", cpLog("cp1", "kept\n")+`{"blob":2,"len":9000000000000000000}`+"\nxxxx")
	write("2-neg.log", cpLog("cp2", "kept too\n")+`{"blob":2,"len":-7}`+"\n")
	write("3-absurd.log", `{"blob":1,"len":1e300}`+"\n")
	outside := filepath.Join(t.TempDir(), "planted.log")
	if err := os.WriteFile(outside, []byte(cpLog("planted", "/etc/shadow contents\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "4-link.log")); err != nil {
		t.Fatal(err)
	}

	cp, err := readCheckpointLog(dir, "1-huge.log")
	if cp == nil || cp.ID != "cp1" || cp.Files[0].Before != "kept\n" {
		t.Fatalf("the whole index before the bad record was lost: %+v", cp)
	}
	if err == nil || !strings.Contains(err.Error(), "9000000000000000000") {
		t.Errorf("the bad record is not named: %v", err)
	}
	if cp, err := readCheckpointLog(dir, "2-neg.log"); cp == nil || cp.ID != "cp2" || err == nil {
		t.Errorf("negative length: %+v, %v", cp, err)
	}
	if cp, _ := readCheckpointLog(dir, "3-absurd.log"); cp != nil {
		t.Errorf("absurd log gave %+v", cp)
	}
	if cp, err := readCheckpointLog(dir, "4-link.log"); cp != nil || err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("a log linking out was read: %+v, %v", cp, err)
	}
}

// The session with such logs still loads its good checkpoints and tells the user of the bad.
func TestSessionLoadsPastCorruptCheckpoints(t *testing.T) {
	h := newHarness(t, editReply("e1", "alpha", "ALPHA"), reply{events: textReply("done")})
	h.set.Mode = ModeAuto
	sid := h.newSession()
	h.prompt("make it loud")
	dir := filepath.Join(h.state, "sessions", sid+".checkpoints")
	if err := os.WriteFile(filepath.Join(dir, "zz-huge.log"), []byte(`{"blob":1,"len":4611686018427387904}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := h.m.get(sid)
	if err != nil {
		t.Fatal(err)
	}
	s.loadCheckpoints(nil)
	res, err := h.m.Checkpoints(context.Background(), protocol.SessionIDParams{SessionID: sid})
	if err != nil || len(res.Checkpoints) != 1 || res.Checkpoints[0].Prompt != "make it loud" {
		t.Fatalf("checkpoints after a corrupt log: %+v, %v", res, err)
	}
	var notices []string
	for _, u := range kinds(h.client.snapshot(), protocol.UpdateNotice) {
		notices = append(notices, u.NoticeTitle+": "+u.Description)
	}
	if all := strings.Join(notices, "\n"); !strings.Contains(all, "zz-huge.log") {
		t.Errorf("no notice names the refused checkpoint log:\n%s", all)
	}
}
