package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

type readFileIn struct {
	Path      string `json:"path" schema:"maxLength=4096"`
	StartLine int    `json:"start_line,omitempty" schema:"minimum=1,maximum=100000000"`
	EndLine   int    `json:"end_line,omitempty" schema:"minimum=1,maximum=100000000"`
}

func (in readFileIn) title() string {
	if in.Path == "" {
		return ""
	}
	return "Read " + in.Path
}

const (
	readMaxLines    = 2000
	readMaxLineRune = 2000
)

// ReadFile is the read_file tool.
var ReadFile Tool = &typed[readFileIn]{spec: Spec{Name: "read_file", Effect: EffectRead, Kind: "read", Title: "Read file"}, run: readFile}

func readFile(ctx context.Context, env *Env, in readFileIn) Result {
	abs, bad := resolve(env, "path", in.Path, false)
	if bad != nil {
		return *bad
	}
	start := max(in.StartLine, 1)
	if in.EndLine != 0 && in.EndLine < start {
		return Errorf("field end_line (%d) is before start_line (%d)", in.EndLine, start)
	}
	name := rel(env, abs)
	// A file too large to load whole is read by range straight from the disk, in bounded memory
	// (readDoc refuses it before the editor would send it all, so the editor's text is never
	// consulted for it either way).
	if st, err := os.Stat(abs); err == nil && st.Mode().IsRegular() && st.Size() > MaxFileBytes {
		if in.StartLine == 0 && in.EndLine == 0 {
			r := tooLarge(env, abs, st.Size())
			r.Output += "; or call read_file with start_line and end_line to read a range of its lines from the disk"
			return r
		}
		window, total, err := readLineRange(ctx, abs, start, in.EndLine)
		if err != nil {
			if errors.Is(err, errBinaryRange) {
				return Errorf("%s is a binary file (or not UTF-8 text), %d bytes; agentd reads and edits UTF-8 text files only", name, st.Size())
			}
			return Errorf("field path: cannot read %s: %v", name, err)
		}
		return formatLines(name, abs, start, in.EndLine, total, window, nil, false)
	}
	doc, bad := readDoc(ctx, env, "path", abs)
	if bad != nil {
		return *bad
	}
	lines := splitLines(doc.Text)
	total := len(lines)
	if total == 0 {
		return formatLines(name, abs, start, in.EndLine, 0, nil, doc.Version, doc.Dirty)
	}
	if start > total {
		return formatLines(name, abs, start, in.EndLine, total, nil, doc.Version, doc.Dirty)
	}
	end := total
	if in.EndLine != 0 {
		end = min(in.EndLine, total)
	}
	return formatLines(name, abs, start, in.EndLine, total, lines[start-1:end], doc.Version, doc.Dirty)
}

// formatLines renders the lines start.. of a file of total lines (window holds them, from line
// start on; it may stop short of endLine, as the byte and line limits below do) with their
// numbers; endLine 0 means to the end.
func formatLines(name, abs string, start, endLine, total int, window []string, version *int32, dirty bool) Result {
	if total == 0 {
		return Result{Output: fmt.Sprintf("%s is empty.", name), Locations: []Location{{Path: abs}}, Raw: readRaw(version, dirty, 0)}
	}
	if start > total {
		return Errorf("field start_line: %s has %d lines; start_line %d is past the end", name, total, start)
	}
	end := total
	if endLine != 0 {
		end = min(endLine, total)
	}
	var b strings.Builder
	// The numbered lines in one allocation: each line shown with its number and a tab.
	size := 0
	for _, l := range window {
		if size += len(l) + 8; size > MaxOutputBytes {
			break
		}
	}
	b.Grow(size)
	var num [20]byte
	shortened := 0
	last := start - 1
	for i := start; i <= end; i++ {
		if i-start >= readMaxLines || i-start >= len(window) || b.Len() >= MaxOutputBytes {
			break
		}
		line := window[i-start]
		if len(line) > readMaxLineRune && utf8.RuneCountInString(line) > readMaxLineRune {
			line = string([]rune(line)[:readMaxLineRune]) + " …[line shortened]"
			shortened++
		}
		b.Write(strconv.AppendInt(num[:0], int64(i), 10))
		b.WriteByte('\t')
		b.WriteString(line)
		b.WriteByte('\n')
		last = i
	}
	if last < end {
		fmt.Fprintf(&b, "\n[Showing lines %d-%d of %d. The rest was cut to keep the output small: call read_file with start_line=%d to continue.]\n", start, last, total, last+1)
	} else if start > 1 || end < total {
		fmt.Fprintf(&b, "\n[Lines %d-%d of %d.]\n", start, last, total)
	}
	if shortened > 0 {
		fmt.Fprintf(&b, "[%s longer than %d characters shortened.]\n", plural(shortened, "line"), readMaxLineRune)
	}
	if dirty {
		b.WriteString("[This is the editor's unsaved text; the file on disk differs.]\n")
	}
	return Result{Output: b.String(), Locations: []Location{{Path: abs, Line: start}}, Raw: readRaw(version, dirty, total)}
}

func readRaw(version *int32, dirty bool, lines int) map[string]any {
	m := map[string]any{"lines": lines, "dirty": dirty}
	if version != nil {
		m["version"] = *version
	}
	return m
}

// splitLines splits text into lines without their terminators; a final newline does not start
// another line.
func splitLines(text string) []string {
	if text == "" {
		return nil
	}
	text = strings.TrimSuffix(text, "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

var errBinaryRange = errors.New("binary")

// readLineRange streams the file at path and returns its lines start..end (end 0: to the end),
// without terminators, and the file's line count, holding at most what read_file can show:
// readMaxLines lines, MaxOutputBytes of them in all, each cut at 4*readMaxLineRune+4 bytes (more
// than readMaxLineRune runes, so formatLines still marks it shortened). The lines after the range
// are only counted. A NUL or invalid UTF-8 in the first 8 KiB is errBinaryRange.
func readLineRange(ctx context.Context, path string, start, end int) (window []string, total int, err error) {
	// O_NONBLOCK: a FIFO swapped in after the caller's stat must not block the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, 0, err
	} else if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(8192)
	if len(head) == 8192 {
		// A rune cut at the end of the peek is not a sign of binary.
		for i := 0; i < 3 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1]
		}
	}
	if isBinary(head) {
		return nil, 0, errBinaryRange
	}
	const maxLine = 4*readMaxLineRune + 4
	var line []byte
	kept, n := 0, 0 // bytes kept, lines seen
	inLine := false // a line has begun and not ended
	for {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		chunk, rerr := br.ReadSlice('\n')
		if len(chunk) > 0 {
			if !inLine {
				n++
				inLine = true
				line = line[:0]
			}
			want := n >= start && (end == 0 || n <= end) && len(window) < readMaxLines && kept < MaxOutputBytes
			if want && len(line) < maxLine {
				line = append(line, chunk[:min(len(chunk), maxLine-len(line))]...)
			}
			if chunk[len(chunk)-1] == '\n' {
				inLine = false
				if want {
					l := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
					window = append(window, string(l))
					kept += len(l) + 8
				}
			}
		}
		if rerr == bufio.ErrBufferFull {
			continue
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, 0, rerr
		}
		if end != 0 && n >= end || len(window) >= readMaxLines || kept >= MaxOutputBytes {
			break
		}
	}
	if inLine && len(line) > 0 && n >= start && (end == 0 || n <= end) && len(window) < readMaxLines && kept < MaxOutputBytes {
		window = append(window, string(bytes.TrimSuffix(line, []byte("\r"))))
	}
	// Count the rest, which starts at a line boundary: its newlines, and a last line without one.
	var buf [64 << 10]byte
	last := byte('\n')
	for {
		k, rerr := br.Read(buf[:])
		if k > 0 {
			n += bytes.Count(buf[:k], []byte("\n"))
			last = buf[k-1]
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, 0, rerr
		}
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return window, n, nil
}
