package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/workspace"
)

// Limits shared by the tools. They keep one call's output within what a model can use.
const (
	// MaxFileBytes is the largest file read_file and edit_file will load.
	MaxFileBytes = 8 << 20
	// MaxOutputBytes caps the text a read tool returns in one call.
	MaxOutputBytes = 100 << 10
)

// resolve contains a path the model named; the error result names the field.
func resolve(env *Env, field, p string, forWrite bool) (string, *Result) {
	abs, err := env.Roots.Resolve(p, forWrite)
	if err != nil {
		r := Errorf("field %s: %v", field, err)
		return "", &r
	}
	return abs, nil
}

// rel is how a path is shown to the model: relative to its root.
func rel(env *Env, abs string) string {
	r := env.Roots.Rel(abs)
	if r == "." {
		return "."
	}
	return filepath.ToSlash(r)
}

// readDoc reads a text file through the workspace port, refusing binaries and huge files with a
// message the model can act on.
func readDoc(ctx context.Context, env *Env, field, abs string) (workspace.Doc, *Result) {
	// Refuse a huge file before the editor sends all of it over the wire.
	if st, err := os.Stat(abs); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		r := tooLarge(env, abs, st.Size())
		return workspace.Doc{}, &r
	}
	doc, err := env.WS.ReadFile(ctx, abs)
	if err != nil {
		var r Result
		switch {
		case errors.Is(err, fs.ErrNotExist):
			r = Errorf("field %s: %s does not exist", field, rel(env, abs))
		case isDirErr(err):
			r = Errorf("field %s: %s is a directory; use list_dir", field, rel(env, abs))
		default:
			r = Errorf("field %s: cannot read %s: %v", field, rel(env, abs), err)
		}
		return doc, &r
	}
	if len(doc.Text) > MaxFileBytes {
		r := tooLarge(env, abs, int64(len(doc.Text)))
		return doc, &r
	}
	if isBinary(doc.Text) {
		what := "a binary file"
		if !strings.Contains(doc.Text[:min(len(doc.Text), 8192)], "\x00") {
			what = "not UTF-8 text (a binary file, or text in another encoding)"
		}
		r := Errorf("%s is %s, %d bytes; agentd reads and edits UTF-8 text files only", rel(env, abs), what, len(doc.Text))
		return doc, &r
	}
	return doc, nil
}

// tooLarge refuses a file over MaxFileBytes and says what works on it instead: search_text
// searches files of any size and shows the matching lines with their numbers.
func tooLarge(env *Env, abs string, size int64) Result {
	return Errorf("%s is %d bytes, more than the %d bytes read_file and edit_file load; search_text searches files of any size and shows the matching lines with their line numbers (search for the part you need), and where programs may run, run_program can print a range of its lines (for example sed -n '100,200p')", rel(env, abs), size, MaxFileBytes)
}

func isDirErr(err error) bool {
	return strings.Contains(err.Error(), "is a directory")
}

// isBinary reports a NUL byte in the first 8 KiB, or text that is not UTF-8 there.
func isBinary[S ~string | ~[]byte](s S) bool {
	head := s
	if len(head) > 8192 {
		head = head[:8192]
	}
	for i := 0; i < len(head); i++ {
		if head[i] == 0 {
			return true
		}
	}
	// Cut a rune split by the 8 KiB boundary before checking.
	b := []byte(string(head))
	for n := 0; n < 3 && len(b) > 0 && !utf8.Valid(b) && len(s) > 8192; n++ {
		b = b[:len(b)-1]
	}
	return !utf8.Valid(b)
}

// plural formats "1 file" / "3 files".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	if strings.HasSuffix(word, "y") && !strings.HasSuffix(word, "ey") {
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	}
	if strings.HasSuffix(word, "s") || strings.HasSuffix(word, "x") || strings.HasSuffix(word, "ch") {
		return fmt.Sprintf("%d %ses", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func ptr[T any](v T) *T { return &v }

// permit asks the policy; a denial is the error result the model reads.
func permit(ctx context.Context, env *Env, req PermissionRequest) *Result {
	if env.Permit == nil {
		return nil
	}
	if err := env.Permit(ctx, req); err != nil {
		var r Result
		if IsDenied(err) {
			r = Errorf("permission denied: %v", err)
			r.Raw = map[string]any{"denied": true, "reason": err.Error()}
		} else if ctx.Err() != nil {
			r = Errorf("cancelled before the permission was answered")
		} else {
			r = Errorf("could not ask for permission: %v", err)
		}
		return &r
	}
	return nil
}

// applyEdit sends changes to the editor and turns a refusal into a result telling the model to
// re-read.
func applyEdit(ctx context.Context, env *Env, label string, changes []workspace.Change) *Result {
	if r := recontain(env, changes); r != nil {
		return r
	}
	err := env.WS.ApplyEdit(ctx, label, changes)
	if err == nil {
		return nil
	}
	var na *workspace.NotAppliedError
	var r Result
	if errors.As(err, &na) {
		r = Errorf("%v. The file may have changed since it was read (the user may be editing it): nothing was changed; read it again with read_file and redo the edit against its current text", err)
	} else if ctx.Err() != nil {
		r = Errorf("cancelled; the edit may not have been applied")
	} else {
		r = Errorf("the edit could not be applied: %v", err)
	}
	return &r
}

// recontain checks the paths of a change again just before it is applied. They were contained
// when the call was computed, but the user may take minutes to answer the permission request,
// and a directory swapped for a symlink meanwhile would carry the change outside the roots. A
// contained path resolves to itself (Resolve returns real paths), so any difference means the
// file system changed under it. For a change acting on an entry itself (delete, rename) only
// the parent must still resolve to itself: the entry may be a symlink, and is acted on as one.
func recontain(env *Env, changes []workspace.Change) *Result {
	for _, c := range changes {
		var err error
		switch c.Kind {
		case workspace.ChangeRename:
			err = stillAt(env, c.Path, true)
			if err == nil {
				err = stillAt(env, c.NewPath, true)
			}
		case workspace.ChangeDelete:
			err = stillAt(env, c.Path, true)
		default:
			err = stillAt(env, c.Path, false)
		}
		if err != nil {
			r := Errorf("%v. Nothing was changed; look at the directory again (list_dir) before retrying", err)
			return &r
		}
	}
	return nil
}

// stillAt reports whether p (or, for an entry, its directory) still resolves to itself.
func stillAt(env *Env, p string, entry bool) error {
	q := p
	if entry {
		q = filepath.Dir(p)
	}
	got, err := env.Roots.Resolve(q, true)
	if err != nil {
		return fmt.Errorf("%s changed while the permission was asked: %v", rel(env, p), err)
	}
	if got != q {
		return fmt.Errorf("%s changed while the permission was asked: it now leads through a symlink to %s", rel(env, p), got)
	}
	return nil
}
