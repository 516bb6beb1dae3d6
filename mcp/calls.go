package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/tools"
)

// What a server sends during a call: progress notifications, shown on the call (throttled), and
// questions for the user (elicitation), shown through the session's client. A call is found by
// the progress token agentd gave it, or, for a question, by the call's context (the 2026-07-28
// revision asks in the call's own result, which the SDK answers on the call's context); a 2025
// server asks with a request of its own, which goes to the newest call running on the server
// (a server shared by two sessions that both call it at once may ask the other one: both are the
// user's).

// progressEvery is the least time between two progress updates of one call shown to the client;
// what arrives between is folded into the next.
var progressEvery = 250 * time.Millisecond

// maxQuestion bounds the message of a question, in characters.
const maxQuestion = 2000

type liveCalls struct {
	mu    sync.Mutex
	next  int
	calls []*liveCall
}

// liveCall is one call running on a server.
type liveCall struct {
	token string
	env   *tools.Env

	mu      sync.Mutex
	last    time.Time
	pending string
	timer   *time.Timer
	done    bool
}

type callKey struct{}

func (l *liveCalls) begin(env *tools.Env) *liveCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next++
	c := &liveCall{token: "agentd-" + strconv.Itoa(l.next), env: env}
	l.calls = append(l.calls, c)
	return c
}

func (l *liveCalls) end(c *liveCall) {
	l.mu.Lock()
	for i, x := range l.calls {
		if x == c {
			l.calls = append(l.calls[:i:i], l.calls[i+1:]...)
			break
		}
	}
	l.mu.Unlock()
	c.mu.Lock()
	c.done = true
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
}

func (l *liveCalls) byToken(tok any) *liveCall {
	s := fmt.Sprint(tok)
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.calls {
		if c.token == s {
			return c
		}
	}
	return nil
}

func (l *liveCalls) newest() *liveCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.calls) == 0 {
		return nil
	}
	return l.calls[len(l.calls)-1]
}

// progressText is one progress notification as the call shows it.
func progressText(p *sdk.ProgressNotificationParams) string {
	var b strings.Builder
	b.WriteString("Progress: ")
	switch {
	case p.Total > 0:
		fmt.Fprintf(&b, "%s of %s (%d%%)", fmtNumber(p.Progress), fmtNumber(p.Total), int(100*min(p.Progress/p.Total, 1)))
	default:
		b.WriteString(fmtNumber(p.Progress))
	}
	if m := Clean(p.Message, 200); m != "" {
		b.WriteString(": " + m)
	}
	return b.String()
}

func fmtNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// progress shows text on the call, at most once per progressEvery: a notification that comes
// sooner waits for the rest of the interval, replaced by any newer one.
func (c *liveCall) progress(text string) {
	if c.env == nil || c.env.Progress == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return
	}
	wait := progressEvery - time.Since(c.last)
	if wait <= 0 {
		c.last = time.Now()
		c.env.Progress(text)
		return
	}
	c.pending = text
	if c.timer == nil {
		c.timer = time.AfterFunc(wait, func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.timer = nil
			if c.done || c.pending == "" {
				return
			}
			c.last = time.Now()
			c.env.Progress(c.pending)
			c.pending = ""
		})
	}
}

// onProgress routes a server's progress notification to its call; one for no call of agentd's
// is dropped.
func (sv *server) onProgress(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
	if req == nil || req.Params == nil {
		return
	}
	if c := sv.live.byToken(req.Params.ProgressToken); c != nil {
		c.progress(progressText(req.Params))
	}
}

var decline = &sdk.ElicitResult{Action: "decline"}

// onElicit asks the user a server's question through the call's session. A question outside a
// call, or in a session whose client cannot show it, is declined; a URL that is not http(s) is
// declined without asking.
func (sv *server) onElicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	if req == nil || req.Params == nil {
		return decline, nil
	}
	c, _ := ctx.Value(callKey{}).(*liveCall)
	if c == nil {
		c = sv.live.newest()
	}
	if c == nil || c.env == nil || c.env.Elicit == nil {
		sv.log.Info("MCP server's question declined: no call of a session that can show it")
		return decline, nil
	}
	p := req.Params
	q := tools.Elicitation{Server: Clean(sv.cfg.Name, maxLabel), Mode: p.Mode, Message: clipRunes(cleanText(p.Message), maxQuestion)}
	if q.Mode == "" {
		q.Mode = "form"
		if p.URL != "" {
			q.Mode = "url"
		}
	}
	switch q.Mode {
	case "form":
		raw, err := json.Marshal(cleanLabels(p.RequestedSchema))
		if err != nil || len(raw) > maxSchema {
			return decline, nil
		}
		q.Schema = raw
	case "url":
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(p.URL) > maxURI || Clean(p.URL, maxURI) != p.URL {
			sv.log.Info("MCP server's link declined: not an http(s) URL", zap.String("url", Clean(p.URL, 200)))
			return decline, nil
		}
		q.URL, q.ID = p.URL, Clean(p.ElicitationID, 200)
	default:
		return decline, nil
	}
	a, err := c.env.Elicit(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return &sdk.ElicitResult{Action: "cancel"}, nil
		}
		return nil, err
	}
	switch a.Action {
	case "accept":
		if q.Mode == "url" {
			return &sdk.ElicitResult{Action: "accept"}, nil
		}
		return &sdk.ElicitResult{Action: "accept", Content: a.Content}, nil
	case "decline", "cancel":
		return &sdk.ElicitResult{Action: a.Action}, nil
	}
	return &sdk.ElicitResult{Action: "cancel"}, nil
}

// cleanLabels is a copy of a form's schema whose words shown to the user (every title and
// description, enumNames) lose their control characters and escape sequences; values the answer
// must match (enum, const, default) are kept as the server sent them.
func cleanLabels(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			switch s, isString := e.(string); {
			case isString && (k == "title" || k == "description"):
				out[k] = cleanText(s)
			case k == "enumNames":
				out[k] = cleanStrings(e)
			default:
				out[k] = cleanLabels(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cleanLabels(e)
		}
		return out
	}
	return v
}

func cleanStrings(v any) any {
	a, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(a))
	for i, e := range a {
		if s, ok := e.(string); ok {
			e = cleanText(s)
		}
		out[i] = e
	}
	return out
}

func clipRunes(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}
