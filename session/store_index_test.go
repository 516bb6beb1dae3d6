package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
)

func writeSession(t testing.TB, st *store, id, title string, pad int) {
	t.Helper()
	sf, err := st.create(id, header{ID: id, Cwd: "/w/" + id, Created: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	defer sf.close()
	if pad > 0 {
		if err := sf.write(record{T: recTitle, Title: strings.Repeat("x", pad)}); err != nil {
			t.Fatal(err)
		}
	}
	if title != "" {
		if err := sf.write(record{T: recTitle, Title: title}); err != nil {
			t.Fatal(err)
		}
	}
}

func titles(t *testing.T, st *store) []string {
	t.Helper()
	infos, err := st.list()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, i := range infos {
		if i.Cwd != "/w/"+i.SessionID || i.UpdatedAt == "" {
			t.Errorf("listing %+v", i)
		}
		out = append(out, i.SessionID+"="+i.Title)
	}
	slices.Sort(out)
	return out
}

// The listing comes from the index while a transcript is unchanged, from the transcript once it
// changes, and the index is rebuilt when it is missing, corrupt or names files that are gone.
func TestListIndex(t *testing.T) {
	dir := t.TempDir()
	st := &store{dir: dir}
	writeSession(t, st, "a", "Alpha", 0)
	writeSession(t, st, "b", "Beta", 0)
	if got := titles(t, st); !slices.Equal(got, []string{"a=Alpha", "b=Beta"}) {
		t.Fatalf("first listing %v", got)
	}
	ixPath := filepath.Join(dir, indexFile)
	if _, err := os.Stat(ixPath); err != nil {
		t.Fatalf("no index after a listing: %v", err)
	}

	// A fresh store (a new process) reads the index, not the transcripts: an entry altered in
	// the index while its file is unchanged shows through, which proves the index is used.
	ix := readIndexFile(t, ixPath)
	e := ix.Sessions["a.jsonl"]
	e.Info.Title = "From the index"
	ix.Sessions["a.jsonl"] = e
	writeIndexFile(t, ixPath, ix)
	if got := titles(t, &store{dir: dir}); !slices.Equal(got, []string{"a=From the index", "b=Beta"}) {
		t.Fatalf("listing with the index %v", got)
	}

	// A transcript that changed is read again.
	sf, err := st.append("a")
	if err != nil {
		t.Fatal(err)
	}
	sf.write(record{T: recTitle, Title: "Alpha 2"})
	sf.close()
	st2 := &store{dir: dir}
	if got := titles(t, st2); !slices.Equal(got, []string{"a=Alpha 2", "b=Beta"}) {
		t.Fatalf("after a write %v", got)
	}
	// New and deleted sessions, through the same store (its in-memory index).
	writeSession(t, st2, "c", "Gamma", 0)
	if err := st2.remove("b"); err != nil {
		t.Fatal(err)
	}
	if got := titles(t, st2); !slices.Equal(got, []string{"a=Alpha 2", "c=Gamma"}) {
		t.Fatalf("after create and delete %v", got)
	}
	if ix := readIndexFile(t, ixPath); len(ix.Sessions) != 2 {
		t.Errorf("index keeps %d entries, want 2", len(ix.Sessions))
	}

	// An index entry for a file that is not there lists nothing; a corrupt or missing index is
	// rebuilt.
	ix = readIndexFile(t, ixPath)
	ix.Sessions["ghost.jsonl"] = indexEntry{Info: ix.Sessions["a.jsonl"].Info}
	writeIndexFile(t, ixPath, ix)
	if got := titles(t, &store{dir: dir}); !slices.Equal(got, []string{"a=Alpha 2", "c=Gamma"}) {
		t.Fatalf("with a ghost entry %v", got)
	}
	for _, bad := range []string{"{not json", "agentd-session-index 99\n", "agentd-session-index 1\n\"a.jsonl\" 1 2 \"a\"\n", ""} {
		if bad == "" {
			os.Remove(ixPath)
		} else if err := os.WriteFile(ixPath, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := titles(t, &store{dir: dir}); !slices.Equal(got, []string{"a=Alpha 2", "c=Gamma"}) {
			t.Fatalf("with index %q: %v", bad, got)
		}
		if ix := readIndexFile(t, ixPath); ix.Version != listIndexVersion || len(ix.Sessions) != 2 {
			t.Errorf("index not rebuilt from %q: %+v", bad, ix)
		}
	}
}

func readIndexFile(t *testing.T, path string) listIndex {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, ok := decodeIndex(b)
	if !ok {
		t.Fatalf("index does not decode:\n%s", b)
	}
	return ix
}

func writeIndexFile(t *testing.T, path string, ix listIndex) {
	t.Helper()
	if err := os.WriteFile(path, encodeIndex(ix), 0o600); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkListSessions lists 1,000 sessions of 16 KB each as a new process does: index on disk,
// nothing in memory ("index"), and with no index at all ("rebuild", the slow path it replaces).
// Budget: ≤ 10 ms for the indexed listing.
func BenchmarkListSessions(b *testing.B) {
	dir := b.TempDir()
	st := &store{dir: dir}
	for i := range 1000 {
		writeSession(b, st, fmt.Sprintf("s%04d", i), "Title", 16<<10)
	}
	if _, err := st.list(); err != nil {
		b.Fatal(err)
	}
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			if infos, err := (&store{dir: dir}).list(); err != nil || len(infos) != 1000 {
				b.Fatal(len(infos), err)
			}
		}
	})
	b.Run("rebuild", func(b *testing.B) {
		for b.Loop() {
			os.Remove(filepath.Join(dir, indexFile))
			if infos, err := (&store{dir: dir}).list(); err != nil || len(infos) != 1000 {
				b.Fatal(len(infos), err)
			}
		}
	})
}

// Every string survives the index file, whatever it holds.
func TestIndexRoundTrip(t *testing.T) {
	ix := listIndex{Version: listIndexVersion, Sessions: map[string]indexEntry{
		"a.jsonl": {Size: 12, Mtime: -3, Info: protocol.SessionInfo{SessionID: "a", Cwd: "/w/a b", Title: "tab\there \"quoted\"\nline 🚀 \xff", UpdatedAt: "2026-12-01T00:00:00Z"}},
		"b.jsonl": {Info: protocol.SessionInfo{SessionID: "b"}},
	}}
	got, ok := decodeIndex(encodeIndex(ix))
	if !ok || !reflect.DeepEqual(got, ix) {
		t.Fatalf("round trip: %v %+v", ok, got)
	}
	for _, bad := range []string{"", "agentd-session-index 1\nx", "agentd-session-index 1\n\"a\" 1 2 \"a\" \"b\" \"c\" \"d\" extra"} {
		if _, ok := decodeIndex([]byte(bad)); ok {
			t.Errorf("decoded %q", bad)
		}
	}
}

// transcriptStats keys the index as os.Lstat would (an index written before it still matches):
// only *.jsonl, in name order, with the same size and UnixNano mtime; a directory that is not
// there is os.ErrNotExist.
func TestTranscriptStats(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.jsonl", "a.jsonl", "index", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+" body"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := transcriptStats(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []transcriptStat
	for _, name := range []string{"a.jsonl", "b.jsonl"} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, transcriptStat{name: name, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
	}
	if !slices.Equal(got, want) {
		t.Fatalf("transcriptStats = %+v, want %+v", got, want)
	}
	if _, err := transcriptStats(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing directory: %v", err)
	}
}
