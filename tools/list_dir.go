package tools

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

type listDirIn struct {
	Path           string `json:"path,omitempty" schema:"maxLength=4096"`
	Depth          int    `json:"depth,omitempty" schema:"minimum=1,maximum=10"`
	IncludeIgnored bool   `json:"include_ignored,omitempty"`
	MaxEntries     int    `json:"max_entries,omitempty" schema:"minimum=1,maximum=5000"`
}

func (in listDirIn) title() string {
	if in.Path == "" {
		return "List ."
	}
	return "List " + in.Path
}

// ListDir is the list_dir tool.
var ListDir Tool = &typed[listDirIn]{spec: Spec{Name: "list_dir", Effect: EffectRead, Kind: "read", Title: "List directory"}, run: listDir}

func listDir(ctx context.Context, env *Env, in listDirIn) Result {
	if in.Path == "" {
		in.Path = "."
	}
	if in.Depth == 0 {
		in.Depth = 2
	}
	if in.MaxEntries == 0 {
		in.MaxEntries = 500
	}
	abs, bad := resolve(env, "path", in.Path, false)
	if bad != nil {
		return *bad
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Errorf("field path: %s does not exist", rel(env, abs))
	}
	if !st.IsDir() {
		return Errorf("field path: %s is a file (%d bytes), not a directory; use read_file", rel(env, abs), st.Size())
	}
	var b strings.Builder
	var notes []string
	if !in.IncludeIgnored && startIgnored(rootOf(env, abs), abs, true) {
		in.IncludeIgnored = true
		notes = append(notes, rel(env, abs)+" is ignored by .gitignore; listed anyway because you named it")
	}
	// Past the limit the walk goes on to count what is not shown (within the depth), so the
	// note gives the number hidden rather than the number of skipped directories; past
	// listCountBudget hidden entries it stops and says "more than".
	shown, cut, dirs, files := 0, 0, 0, 0
	counted := true
	stats, err := walk(ctx, rootOf(env, abs), abs, walkOpts{includeIgnored: in.IncludeIgnored, maxDepth: in.Depth}, func(e walkEntry) error {
		if shown >= in.MaxEntries && cut >= listCountBudget {
			counted = false
			return fs.SkipAll
		}
		isDir := e.Entry.IsDir()
		if isDir {
			dirs++
		} else {
			files++
		}
		if shown >= in.MaxEntries {
			cut++
			return nil
		}
		shown++
		indent := strings.Repeat("  ", e.Depth-1)
		switch {
		case isDir:
			fmt.Fprintf(&b, "%s%s/\n", indent, e.Entry.Name())
		case e.Entry.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(e.Abs)
			fmt.Fprintf(&b, "%s%s -> %s\n", indent, e.Entry.Name(), target)
		default:
			size := ""
			if info, err := e.Entry.Info(); err == nil {
				size = humanSize(info.Size())
			}
			fmt.Fprintf(&b, "%s%s (%s)\n", indent, e.Entry.Name(), size)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("cancelled")
		}
		return Errorf("cannot list %s: %v", rel(env, abs), err)
	}
	if shown == 0 {
		b.WriteString("(empty)\n")
	}
	if cut > 0 {
		more := fmt.Sprintf("%d more entries", cut)
		if !counted {
			more = fmt.Sprintf("more than %d entries (counting stopped there)", cut)
		}
		notes = append(notes, fmt.Sprintf("%s not shown (limit %d; list a subdirectory)", more, in.MaxEntries))
	}
	if stats.DepthCut > 0 {
		notes = append(notes, fmt.Sprintf("%s deeper than %d levels not expanded", plural(stats.DepthCut, "directory"), in.Depth))
	}
	if stats.Ignored > 0 {
		notes = append(notes, fmt.Sprintf("%d entries ignored by .gitignore", stats.Ignored))
	}
	if stats.VCS > 0 {
		notes = append(notes, ".git skipped")
	}
	if stats.Unreadable > 0 {
		notes = append(notes, fmt.Sprintf("%s unreadable", plural(stats.Unreadable, "directory")))
	}
	atLeast := ""
	if !counted {
		atLeast = "at least "
	}
	head := fmt.Sprintf("%s/ (%s%s, %s)\n", rel(env, abs), atLeast, plural(dirs, "directory"), plural(files, "file"))
	out := head + b.String()
	if len(notes) > 0 {
		out += "\n[" + strings.Join(notes, "; ") + ".]\n"
	}
	return Result{Output: out, Locations: []Location{{Path: abs}}, Raw: map[string]any{
		"shown": shown, "notShown": cut, "notShownCounted": counted, "ignored": stats.Ignored, "depthCut": stats.DepthCut,
	}}
}

// listCountBudget is how many entries past the limit list_dir counts before it stops counting.
var listCountBudget = 50_000

func humanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}
