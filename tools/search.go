package tools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/tools/internal/glob"
	"github.com/agentd-dev/agentd/workspace"
)

// The search engine behind search_text: a walk that feeds file paths to one worker per CPU; each
// worker reads the file into a reused buffer, skips binaries, and looks for the pattern's
// required literal first (bytes.Index, or an ASCII case-folding scan keyed on the literal's
// rarest byte for (?i) patterns). Only lines holding the literal are confirmed with the regexp,
// which keeps Go's regexp engine off the bulk of the bytes.

// matcher finds matching lines in a buffer.
type matcher struct {
	re         *regexp.Regexp // confirms a candidate line; nil when a literal hit is a match
	lit        []byte         // required literal; nil: run re over the whole buffer
	fold       bool           // lit is lower-case ASCII and matched ignoring ASCII case
	rare       int            // index in lit of the byte the fold scan looks for
	rareLo     byte
	rareUp     byte
	multiline  bool // the literal spans lines: confirm on the whole buffer
	lineAnchor bool
}

// compileMatcher builds a matcher for pattern. literal quotes it; ignoreCase folds case.
func compileMatcher(pattern string, literal, ignoreCase bool) (*matcher, error) {
	if pattern == "" {
		return nil, fmt.Errorf("field pattern is empty")
	}
	src := pattern
	if literal {
		src = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		src = "(?i)" + src
	}
	re, err := regexp.Compile("(?m)" + src)
	if err != nil {
		return nil, fmt.Errorf("field pattern is not a valid regular expression (RE2 syntax; set literal:true to search for the text as is): %v", err)
	}
	m := &matcher{re: re}
	if literal && !ignoreCase {
		m.lit = []byte(pattern)
		m.re = nil
	} else {
		parsed, err := syntax.Parse(src, syntax.Perl)
		if err == nil {
			lit, fold := requiredLiteral(parsed.Simplify())
			if fold {
				lit = foldSafe(lit)
			}
			if len(lit) > 0 {
				m.lit, m.fold = []byte(lit), fold
			}
		}
	}
	if bytes.IndexByte(m.lit, '\n') >= 0 {
		m.multiline = true
	}
	if m.fold {
		for i := range m.lit {
			m.lit[i] = lowerASCII(m.lit[i])
		}
		m.rare = rarestByte(m.lit)
		m.rareLo = m.lit[m.rare]
		m.rareUp = upperASCII(m.rareLo)
	} else if len(m.lit) > 0 {
		m.rare = rarestByte(m.lit)
		m.rareLo, m.rareUp = m.lit[m.rare], m.lit[m.rare]
	}
	return m, nil
}

// requiredLiteral returns the longest literal every match must contain, and whether it is matched
// case-insensitively. Only concatenations are looked into: an alternation has no single literal.
func requiredLiteral(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold := "", false
		for _, s := range re.Sub {
			l, f := requiredLiteral(s)
			// Prefer longer literals; at equal length prefer a case-sensitive one.
			if len(l) > len(best) || (len(l) == len(best) && !f && bestFold) {
				best, bestFold = l, f
			}
		}
		return best, bestFold
	}
	return "", false
}

// foldSafe cuts a case-folded literal down to its longest run of ASCII letters and symbols whose
// case-fold orbit is ASCII only: Go's (?i) also matches K (U+212A) for k and ſ (U+017F) for s,
// which an ASCII scan would miss.
func foldSafe(lit string) string {
	best, cur := "", strings.Builder{}
	flush := func() {
		if cur.Len() > len(best) {
			best = cur.String()
		}
		cur.Reset()
	}
	for _, r := range lit {
		if r >= utf8.RuneSelf || r == 'k' || r == 'K' || r == 's' || r == 'S' {
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return best
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// byteRank is how common a byte is in source code (higher: more common), so the prefilter scans
// for the literal's rarest byte. The order is measured on a sample of 3,000 files of Go's source
// tree (Go, assembly, C, JavaScript, text).
// It is looked up in the order string itself, a few times per search: a table built from it
// at package level would be built by the init at every start.
func byteRank(b byte) uint8 {
	const order = " et\trn\niasoAclud0f,/p().gmhS=TxE\"1_bIyCR{}Pk2wO:DBMvLNF4638GVH-U5*Q9Y7][zW\\+X;qJK!j&'<%Z$|>`#^?@~"
	if i := strings.IndexByte(order, b); i >= 0 {
		return uint8(255 - i)
	}
	return 0
}

func rarestByte(lit []byte) int {
	best := 0
	for i := range lit {
		rank := byteRank(lit[i])
		if lowerASCII(lit[i]) != upperASCII(lit[i]) {
			// A folded letter is found in either case: count both.
			rank = max(byteRank(lowerASCII(lit[i])), byteRank(upperASCII(lit[i])))
		}
		br := byteRank(lit[best])
		if lowerASCII(lit[best]) != upperASCII(lit[best]) {
			br = max(byteRank(lowerASCII(lit[best])), byteRank(upperASCII(lit[best])))
		}
		if rank < br {
			best = i
		}
	}
	return best
}

// finder walks one buffer for the literal. It remembers the next position of each case of the
// rare byte, so every byte is scanned at most once per case even when one case is frequent and the
// other rare (scanning again for the rarer one after each hit of the other was quadratic).
type finder struct {
	m              *matcher
	buf            []byte
	nextLo, nextUp int // next offsets of rareLo / rareUp at or after the last query; -1 unknown
}

func (m *matcher) finder(buf []byte) finder {
	return finder{m: m, buf: buf, nextLo: -1, nextUp: -1}
}

// next returns the offset of the next occurrence of the literal at or after from, or -1.
func (f *finder) next(from int) int {
	m, buf := f.m, f.buf
	n := len(m.lit)
	pos := from + m.rare
	for pos < len(buf) {
		if f.nextLo < pos {
			f.nextLo = indexFrom(buf, pos, m.rareLo)
		}
		at := f.nextLo
		if m.rareUp != m.rareLo {
			if f.nextUp < pos {
				f.nextUp = indexFrom(buf, pos, m.rareUp)
			}
			at = min(at, f.nextUp)
		}
		if at >= len(buf) {
			return -1
		}
		start := at - m.rare
		if start+n <= len(buf) {
			if m.fold {
				if equalFoldASCII(buf[start:start+n], m.lit) {
					return start
				}
			} else if string(buf[start:start+n]) == string(m.lit) {
				return start
			}
		}
		pos = at + 1
	}
	return -1
}

// indexFrom is the offset of c in buf at or after pos, or len(buf).
func indexFrom(buf []byte, pos int, c byte) int {
	if i := bytes.IndexByte(buf[pos:], c); i >= 0 {
		return pos + i
	}
	return len(buf)
}

// equalFoldASCII compares s with lit, which is lower case.
func equalFoldASCII(s, lit []byte) bool {
	for i, c := range lit {
		d := s[i]
		if d != c && lowerASCII(d) != c {
			return false
		}
	}
	return true
}

// lineMatch is one matching line.
type lineMatch struct {
	Line int
	Text string
}

// scan calls emit for each matching line of buf (1-based line numbers) until emit returns false,
// and returns the number of matching lines seen.
func (m *matcher) scan(buf []byte, emit func(line int, text []byte) bool) int {
	count := 0
	line, counted := 1, 0
	pos := 0
	f := m.finder(buf)
	for pos <= len(buf) {
		var ls, le int
		if m.lit != nil && !m.multiline {
			c := f.next(pos)
			if c < 0 {
				break
			}
			ls = bytes.LastIndexByte(buf[pos:c], '\n') + 1 + pos
			if e := bytes.IndexByte(buf[c:], '\n'); e >= 0 {
				le = c + e
			} else {
				le = len(buf)
			}
			if m.re != nil && !m.re.Match(buf[ls:le]) {
				pos = le + 1
				continue
			}
		} else {
			loc := m.re.FindIndex(buf[pos:])
			if loc == nil {
				break
			}
			c := pos + loc[0]
			ls = bytes.LastIndexByte(buf[pos:c], '\n') + 1 + pos
			if e := bytes.IndexByte(buf[c:], '\n'); e >= 0 {
				le = c + e
			} else {
				le = len(buf)
			}
			if loc[1] == loc[0] && c == len(buf) && ls == c {
				// An empty match at the very end of a file that ends in a newline is not a line.
				break
			}
		}
		line += bytes.Count(buf[counted:ls], []byte{'\n'})
		counted = ls
		count++
		if !emit(line, buf[ls:le]) {
			break
		}
		pos = le + 1
	}
	return count
}

// searchWindow is how much of a file too large to read whole is held at once while it is searched.
const searchWindow = 4 << 20

// scanStream is scan over the file at path read in windows of window bytes cut after their last
// newline, so a file of any size is searched in bounded memory (buf is reused and returned). Line
// numbers count from the start of the file. A line longer than a window is searched in
// window-sized pieces, and a match spanning lines is found only within one window: a match across
// a cut is missed. Like a whole read, a NUL byte in the first 8 KB marks the file binary and
// nothing is scanned. ctx is checked between windows.
func (m *matcher) scanStream(ctx context.Context, path string, buf []byte, window int, emit func(line int, text []byte) bool) (count int, binary bool, _ []byte, _ error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, buf, err
	}
	defer f.Close()
	if cap(buf) < window {
		buf = make([]byte, window)
	}
	buf = buf[:window]
	carry, lines := 0, 0
	stopped := false
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return count, false, buf, err
		}
		n, rerr := io.ReadFull(f, buf[carry:])
		end := carry + n
		eof := rerr == io.EOF || rerr == io.ErrUnexpectedEOF
		if rerr != nil && !eof {
			return count, false, buf, rerr
		}
		if first && bytes.IndexByte(buf[:min(end, 8192)], 0) >= 0 {
			return 0, true, buf, nil
		}
		cut := end
		if !eof {
			if i := bytes.LastIndexByte(buf[:end], '\n'); i >= 0 {
				cut = i + 1
			}
		}
		chunk := buf[:cut]
		if !stopped {
			base := lines
			count += m.scan(chunk, func(line int, text []byte) bool {
				if !emit(base+line, text) {
					stopped = true
					return false
				}
				return true
			})
		}
		lines += bytes.Count(chunk, []byte{'\n'})
		if eof {
			return count, false, buf, nil
		}
		carry = copy(buf, buf[cut:end])
	}
}

// searchKeepCap bounds the matched lines held in memory across all files.
const searchKeepCap = 20000

// searchOpts is one search.
type searchOpts struct {
	Root, Start    string // the root holding Start, and the directory or file searched
	Matcher        *matcher
	Include        []*glob.Glob
	Exclude        []*glob.Glob
	IncludeIgnored bool
	// Dirty maps absolute paths to the editor's unsaved text, searched instead of the disk.
	Dirty map[string]string
	// MaxPerFile caps the lines kept per file; MaxKept caps the lines kept overall (counting
	// goes on).
	MaxPerFile, MaxKept int
	// MaxFileBytes is the largest file read whole (default 32 MB); a larger one is searched as a
	// stream in windows of Window bytes (default searchWindow), so memory stays bounded.
	MaxFileBytes int64
	Window       int
	Workers      int
}

type fileMatches struct {
	Path    string // absolute
	Rel     string // slash-separated, relative to Root
	Count   int
	Matches []lineMatch
}

type searchOutcome struct {
	Files        []fileMatches // sorted by path
	TotalMatches int
	Searched     int
	Binary       int
	Streamed     int // searched in windows: larger than MaxFileBytes
	Filtered     int // left out by include/exclude
	Walk         walkStats
	Workers      int // how many searched at once
}

// search runs opts: one worker per CPU takes directories and files from a shared stack, so the
// walk is as parallel as the reading and matching. Results are sorted by path; the kept lines
// may be fewer than counted.
func search(ctx context.Context, o searchOpts) (searchOutcome, error) {
	var out searchOutcome
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	out.Workers = o.Workers
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 32 << 20
	}
	if o.Window <= 0 {
		o.Window = searchWindow
	}
	var (
		mu                                  sync.Mutex
		searched, binary, streamed, kept    atomic.Int64
		ignored, vcs, unreadable, filteredN atomic.Int64
	)
	q := newWorkQueue()
	push := func(abs string, parts []string) bool {
		rel := strings.Join(parts, "/")
		if !globsAllow(o.Include, o.Exclude, rel) {
			filteredN.Add(1)
			return false
		}
		q.push(workItem{abs: abs, rel: rel})
		return true
	}
	searchFile := func(buf []byte, it workItem) []byte {
		var fm *fileMatches
		emit := func(line int, text []byte) bool {
			if fm == nil {
				fm = &fileMatches{Path: it.abs, Rel: it.rel}
			}
			if len(fm.Matches) < o.MaxPerFile && kept.Add(1) <= int64(max(o.MaxKept, searchKeepCap)) {
				fm.Matches = append(fm.Matches, lineMatch{Line: line, Text: clipLine(text)})
			}
			return true
		}
		var data []byte
		if text, ok := o.Dirty[it.abs]; ok {
			data = []byte(text)
		} else {
			var err error
			var big bool
			var isDir bool
			buf, big, isDir, err = workspace.ReadInto(buf, it.abs, o.MaxFileBytes)
			if isDir && err == nil {
				err = fmt.Errorf("%s became a directory", it.abs)
			}
			if big {
				// Too large to hold whole: searched as a stream, in windows.
				var n int
				var isBinary bool
				n, isBinary, buf, err = o.Matcher.scanStream(ctx, it.abs, buf, o.Window, emit)
				switch {
				case err != nil:
					unreadable.Add(1)
				case isBinary:
					binary.Add(1)
				default:
					searched.Add(1)
					streamed.Add(1)
				}
				if n > 0 && err == nil && !isBinary {
					fm.Count = n
					mu.Lock()
					out.Files = append(out.Files, *fm)
					out.TotalMatches += n
					mu.Unlock()
				}
				return buf
			}
			if err != nil {
				return buf
			}
			data = buf
		}
		// Like ripgrep, a NUL byte near the start marks a binary file.
		if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			binary.Add(1)
			return buf
		}
		searched.Add(1)
		n := o.Matcher.scan(data, emit)
		if n > 0 {
			fm.Count = n
			mu.Lock()
			out.Files = append(out.Files, *fm)
			out.TotalMatches += n
			mu.Unlock()
		}
		return buf
	}
	readDir := func(it workItem) {
		ents, err := os.ReadDir(it.abs)
		if err != nil {
			unreadable.Add(1)
			return
		}
		rules := it.rules
		if !o.IncludeIgnored && it.depth > 0 {
			rules = rules.child(it.abs, it.parts, hasIgnoreFile(ents))
		}
		for _, e := range ents {
			name := e.Name()
			isDir := e.IsDir()
			if isDir && name == ".git" {
				vcs.Add(1)
				continue
			}
			parts := append(slices.Clip(it.parts), name)
			if rules.ignored(parts, isDir) {
				ignored.Add(1)
				continue
			}
			abs := filepath.Join(it.abs, name)
			switch {
			case isDir:
				if len(o.Exclude) > 0 && !globsAllow(nil, o.Exclude, strings.Join(parts, "/")) {
					filteredN.Add(1)
					continue
				}
				q.push(workItem{dir: true, abs: abs, parts: parts, rules: rules, depth: it.depth + 1})
			case e.Type().IsRegular():
				push(abs, parts)
			}
		}
	}

	st, err := os.Stat(o.Start)
	switch {
	case err == nil && !st.IsDir():
		push(o.Start, relParts(o.Root, o.Start))
	case err == nil:
		var rules *ignoreRules
		if !o.IncludeIgnored {
			rules = rootRules(o.Root, o.Start)
		}
		q.push(workItem{dir: true, abs: o.Start, parts: relParts(o.Root, o.Start), rules: rules})
	}
	// Unsaved buffers of files not on disk yet (new files) are searched too.
	for abs := range o.Dirty {
		if !within(o.Start, abs) {
			continue
		}
		if _, err := os.Stat(abs); err == nil {
			continue
		}
		push(abs, relParts(o.Root, abs))
	}

	var wg sync.WaitGroup
	for range o.Workers {
		wg.Go(func() {
			buf := make([]byte, 0, 64<<10) // the files' reads reuse it, grown for the largest
			for {
				it, ok := q.pop()
				if !ok {
					return
				}
				if ctx.Err() == nil {
					if it.dir {
						readDir(it)
					} else {
						buf = searchFile(buf, it)
					}
				}
				q.done()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return out, err
	}
	out.Searched, out.Binary, out.Streamed, out.Filtered = int(searched.Load()), int(binary.Load()), int(streamed.Load()), int(filteredN.Load())
	out.Walk = walkStats{Ignored: int(ignored.Load()), VCS: int(vcs.Load()), Unreadable: int(unreadable.Load())}
	sort.Slice(out.Files, func(i, j int) bool { return out.Files[i].Rel < out.Files[j].Rel })
	// Lines are kept per file up to MaxPerFile, so the first MaxKept in path order are the same
	// every time unless more than searchKeepCap lines matched.
	left := o.MaxKept
	for i := range out.Files {
		f := &out.Files[i]
		f.Matches = f.Matches[:min(len(f.Matches), left)]
		left -= len(f.Matches)
	}
	return out, nil
}

// workItem is a directory to list or a file to search.
type workItem struct {
	dir   bool
	abs   string
	rel   string   // files: slash-separated, relative to the root
	parts []string // directories: components relative to the root
	rules *ignoreRules
	depth int
}

// workQueue is an unbounded LIFO shared by the search workers; it closes itself when nothing is
// queued and nothing is in progress (an item in progress may still push more).
type workQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	items   []workItem
	pending int
	closed  bool
}

func newWorkQueue() *workQueue {
	q := &workQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *workQueue) push(it workItem) {
	q.mu.Lock()
	q.items = append(q.items, it)
	q.pending++
	q.mu.Unlock()
	q.cond.Signal()
}

func (q *workQueue) pop() (workItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		if q.closed || q.pending == 0 {
			q.closed = true
			q.cond.Broadcast()
			return workItem{}, false
		}
		q.cond.Wait()
	}
	it := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return it, true
}

// done marks a popped item finished.
func (q *workQueue) done() {
	q.mu.Lock()
	q.pending--
	if q.pending == 0 && len(q.items) == 0 {
		q.closed = true
		q.cond.Broadcast()
	}
	q.mu.Unlock()
}

func globsAllow(include, exclude []*glob.Glob, rel string) bool {
	for _, g := range exclude {
		if g.Match(rel) {
			return false
		}
	}
	if len(include) == 0 {
		return true
	}
	return slices.ContainsFunc(include, func(g *glob.Glob) bool { return g.Match(rel) })
}

const maxShownLine = 300

func clipLine(b []byte) string {
	b = bytes.TrimRight(b, "\r")
	// Only the bytes that may be shown are copied: a minified file's line can be megabytes.
	return clip.String(string(b[:min(len(b), maxShownLine+1)]), maxShownLine, " …")
}
