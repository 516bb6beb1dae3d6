package providertest

import (
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd-dev/agentd/providers"
)

// recorder is a testing.TB that keeps the failures instead of reporting them.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func seq(evs ...providers.Event) iter.Seq[providers.Event] {
	return func(yield func(providers.Event) bool) {
		for _, ev := range evs {
			if !yield(ev) {
				return
			}
		}
	}
}

func TestCollectEnforcesTheStreamContract(t *testing.T) {
	done := providers.Event{Type: providers.EventCompleted, StopReason: providers.StopEndTurn}
	for _, c := range []struct {
		name string
		evs  []providers.Event
		want string // a fragment of the expected complaint, "" for none
	}{
		{"clean", []providers.Event{{Type: providers.EventTextDelta, Text: "hi"}, done}, ""},
		{"no terminal event", []providers.Event{{Type: providers.EventTextDelta, Text: "hi"}}, "0 terminal events"},
		{"two terminal events", []providers.Event{done, done}, "after the terminal event"},
		{"completed without start", []providers.Event{{Type: providers.EventToolCallCompleted, Index: 0, ToolCallID: "a", ToolName: "x", Args: []byte(`{}`)}, done}, "without being started"},
		{"started never completed", []providers.Event{{Type: providers.EventToolCallStarted, Index: 0, ToolCallID: "a", ToolName: "x"}, done}, "never completed"},
		{"args not JSON", []providers.Event{
			{Type: providers.EventToolCallStarted, ToolCallID: "a", ToolName: "x"},
			{Type: providers.EventToolCallCompleted, ToolCallID: "a", ToolName: "x", Args: []byte(`{"a":`)}, done}, "not valid JSON"},
		{"duplicate ids", []providers.Event{
			{Type: providers.EventToolCallStarted, Index: 0, ToolCallID: "a", ToolName: "x"},
			{Type: providers.EventToolCallCompleted, Index: 0, ToolCallID: "a", ToolName: "x", Args: []byte(`{}`)},
			{Type: providers.EventToolCallStarted, Index: 1, ToolCallID: "a", ToolName: "y"},
			{Type: providers.EventToolCallCompleted, Index: 1, ToolCallID: "a", ToolName: "y", Args: []byte(`{}`)}, done}, "used twice"},
		{"failure without message", []providers.Event{{Type: providers.EventFailed, Err: &providers.Error{Kind: providers.ErrServer}}}, "empty user message"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{TB: t}
			Collect(r, seq(c.evs...))
			got := strings.Join(r.errs, "\n")
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("complaints %q, want one about %q", got, c.want)
			}
		})
	}
}

func TestCheckReportsDifferences(t *testing.T) {
	o := Outcome{Text: "Hello", Stop: providers.StopEndTurn, ToolCalls: []ToolCall{{Name: "add", ID: "1", Args: map[string]any{"a": 2.0}}}}
	r := &recorder{TB: t}
	Check(r, o, Expect{Text: "Hello", Stop: providers.StopEndTurn, ToolCalls: []Call{{Name: "add", Args: `{"a": 2}`}}})
	if len(r.errs) != 0 {
		t.Fatalf("a matching outcome failed: %q", r.errs)
	}
	r = &recorder{TB: t}
	Check(r, o, Expect{Text: "Hi", Stop: providers.StopToolUse, ToolCalls: []Call{{Name: "add", Args: `{"a": 3}`, ID: "2"}}, Notices: 1})
	got := strings.Join(r.errs, "\n")
	for _, want := range []string{"text =", "stop =", "args =", "id =", "notices ="} {
		if !strings.Contains(got, want) {
			t.Errorf("no complaint about %q in %q", want, got)
		}
	}
}

// recordTB records Skipf and Fatalf instead of ending the test.
type recordTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordTB) Helper()                           {}
func (r *recordTB) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recordTB) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

// Missing shared fixtures skip the table on a clone and fail it in CI; present ones do neither.
func TestMissingSharedFixturesFailInCI(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	for _, tc := range []struct {
		dir           string
		ci            bool
		skip, failure bool
	}{
		{missing, false, true, false},
		{missing, true, false, true},
		{t.TempDir(), true, false, false},
		{t.TempDir(), false, false, false},
	} {
		r := &recordTB{TB: t}
		requireDir(r, tc.dir, tc.ci)
		if (r.skipped != "") != tc.skip || (r.failed != "") != tc.failure {
			t.Errorf("dir %s, CI %v: skipped %q, failed %q", tc.dir, tc.ci, r.skipped, r.failed)
		}
		if msg := r.skipped + r.failed; msg != "" && !strings.Contains(msg, tc.dir) {
			t.Errorf("message %q does not name %s", msg, tc.dir)
		}
	}
}
