package session

import (
	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// The loop's stopping rule, in one place. After each model step the turn either asks the model
// again, ends with a stop reason, or fails with the step's error; on the way it may run the
// step's calls and send one of the loop's one-shot messages (a steer, a nudge, a notice). Which,
// and in what order, is whatNext: a pure function of what the step produced and of what the
// hooks asked so far answered, in the manner of tools/policy's Decide. The loop (turn.run) only
// asks the hook whatNext names, records the answer and asks again, so every path through the
// rule is a row of TestWhatNext.

// loopHook is one thing the loop may do or ask between two model steps. Each is asked at most
// once per step; its answer is what the hook reports (a nudge sent, a steer taken, the turn
// cancelled, a file changed).
type loopHook uint16

const (
	// hookCompact compacts the history after a context_overflow, once per turn; yes: retry.
	hookCompact loopHook = 1 << iota
	// hookTextStep takes respond's calls out of a text-protocol reply; yes: the model answered.
	hookTextStep
	// hookCancelled reads whether the turn was cancelled meanwhile.
	hookCancelled
	// hookSteerOrEnd takes a waiting steer, or marks the session ending; yes: a steer was taken.
	hookSteerOrEnd
	// hookSteer takes the waiting steers at a step boundary; yes: there was one.
	hookSteer
	// hookTextUnfinished is the text protocol's unfinished-turn nudge; yes: it was sent.
	hookTextUnfinished
	// hookTruncated notices a reply cut at the output limit, once per turn; yes: it was sent.
	hookTruncated
	// hookRequiredTool nudges a model that wrote a tool call out as text; yes: it was sent.
	hookRequiredTool
	// hookUnfinished nudges a run that used tools and stopped without answering; yes: sent.
	hookUnfinished
	// hookStopHooks runs the user's stop hooks (session/hooks.go); yes: one asked for one more
	// step.
	hookStopHooks
	// hookReview is the answer-review pass over a final answer.
	hookReview
	// hookRunCutCalls fails the calls of a reply cut at the output limit (none of them runs).
	hookRunCutCalls
	// hookTruncatedCalls is hookTruncated for a reply whose calls were cut; yes: it was sent.
	hookTruncatedCalls
	// hookRunCalls runs the step's calls; yes: one of them changed the workspace.
	hookRunCalls
	// hookRefreshLive rebuilds the live context after the workspace changed.
	hookRefreshLive
)

// loopHooks is a set of hooks.
type loopHooks uint16

func (s loopHooks) has(h loopHook) bool { return s&loopHooks(h) != 0 }

// stepFacts is what whatNext decides from: the step's outcome and the hooks' answers so far.
type stepFacts struct {
	// overflow: the step failed with a context_overflow and the turn has not compacted for one.
	overflow bool
	// cancelled: the step's stream ended because the turn was cancelled.
	cancelled bool
	// failed: the step's stream ended in an error.
	failed bool
	// text: the turn calls tools through the text protocol (session/textmode.go).
	text bool
	// stop is the step's stop reason; calls how many calls it asked for, read again after each
	// hook (hookTextStep takes respond's calls out).
	stop  providers.StopReason
	calls int
	// asked are the hooks asked in this step, yes those of them that answered yes.
	asked, yes loopHooks
}

// nextStep is whatNext's answer: a hook to ask, or (hook zero) the decision.
type nextStep struct {
	hook loopHook
	// again asks the model again; fail ends the turn with the step's error; otherwise the turn
	// ends with stop.
	again bool
	fail  bool
	stop  string
}

// whatNext is the loop's stopping rule. It names the next hook to ask until the facts decide the
// step, then says whether the model is asked again or how the turn ends.
func whatNext(f stepFacts) nextStep {
	// ask is the hook h when it has not been asked yet; answered reports its answer once it has.
	ask := func(h loopHook) (nextStep, bool) { return nextStep{hook: h}, !f.asked.has(h) }
	again := nextStep{again: true}
	end := func(stop string) nextStep { return nextStep{stop: stop} }

	if f.overflow {
		// The history no longer fits: summarize the turns before this one and retry once.
		if n, pending := ask(hookCompact); pending {
			return n
		}
		if f.yes.has(hookCompact) {
			return again
		}
	}
	if f.cancelled {
		return end(protocol.StopCancelled)
	}
	if f.failed {
		return nextStep{fail: true}
	}
	if f.text {
		if n, pending := ask(hookTextStep); pending {
			return n
		}
		if f.yes.has(hookTextStep) {
			// The model answered through respond: the turn is over, unless the user steered
			// meanwhile (steerOrEnd: a later steer is refused, not dropped).
			if n, pending := ask(hookCancelled); pending {
				return n
			}
			if f.yes.has(hookCancelled) {
				return end(protocol.StopCancelled)
			}
			if n, pending := ask(hookSteerOrEnd); pending {
				return n
			}
			if f.yes.has(hookSteerOrEnd) {
				return again
			}
			return end(protocol.StopEndTurn)
		}
		if f.calls == 0 && f.stop == providers.StopEndTurn {
			for _, h := range [...]loopHook{hookSteer, hookTextUnfinished} {
				if n, pending := ask(h); pending {
					return n
				}
				if f.yes.has(h) {
					return again
				}
			}
		}
	}
	if f.calls == 0 {
		if f.stop != providers.StopMaxTokens && f.stop != providers.StopRefusal {
			// A steering message that arrived while the model answered: it answers that too.
			if n, pending := ask(hookSteerOrEnd); pending {
				return n
			}
			if f.yes.has(hookSteerOrEnd) {
				return again
			}
		}
		switch f.stop {
		case providers.StopMaxTokens:
			if n, pending := ask(hookTruncated); pending {
				return n
			}
			if f.yes.has(hookTruncated) {
				return again
			}
			return end(protocol.StopMaxTokens)
		case providers.StopRefusal:
			return end(protocol.StopRefusal)
		}
		// Under the text protocol a call written out is a call: required_tool's advice (use the
		// tool-calling interface) does not apply.
		nudges := []loopHook{hookRequiredTool, hookUnfinished}
		if f.text {
			nudges = nudges[1:]
		}
		for _, h := range nudges {
			if n, pending := ask(h); pending {
				return n
			}
			if f.yes.has(h) {
				return again
			}
		}
		if n, pending := ask(hookStopHooks); pending {
			return n
		}
		if f.yes.has(hookStopHooks) {
			return again
		}
		if n, pending := ask(hookReview); pending {
			return n
		}
		return end(protocol.StopEndTurn)
	}
	if f.stop == providers.StopMaxTokens {
		// The reply was cut off: its calls may have partial arguments, so none runs.
		if n, pending := ask(hookRunCutCalls); pending {
			return n
		}
		if n, pending := ask(hookCancelled); pending {
			return n
		}
		if !f.yes.has(hookCancelled) {
			if n, pending := ask(hookTruncatedCalls); pending {
				return n
			}
			if f.yes.has(hookTruncatedCalls) {
				return again
			}
		}
		return end(protocol.StopMaxTokens)
	}
	if n, pending := ask(hookRunCalls); pending {
		return n
	}
	if n, pending := ask(hookCancelled); pending {
		return n
	}
	if f.yes.has(hookCancelled) {
		return end(protocol.StopCancelled)
	}
	if f.yes.has(hookRunCalls) {
		if n, pending := ask(hookRefreshLive); pending {
			return n
		}
	}
	if n, pending := ask(hookSteer); pending {
		return n
	}
	return again
}

// afterStep runs whatNext's hooks for a finished step until it decides.
func (t *turn) afterStep(st *step) nextStep {
	f := stepFacts{
		overflow:  st.err != nil && st.err.Kind == providers.ErrContextOverflow && !t.overflowed,
		cancelled: st.cancelled,
		failed:    st.err != nil,
		text:      t.mode == config.ToolCallingText,
		stop:      st.stop,
		calls:     len(st.calls),
	}
	for {
		n := whatNext(f)
		if n.hook == 0 {
			return n
		}
		f.asked |= loopHooks(n.hook)
		if t.runHook(n.hook, st) {
			f.yes |= loopHooks(n.hook)
		}
		f.calls = len(st.calls)
	}
}

// runHook does or asks h for step st and returns its answer (loopHook's constants say what it
// means for each).
func (t *turn) runHook(h loopHook, st *step) bool {
	switch h {
	case hookCompact:
		if t.ctx.Err() != nil {
			return false
		}
		t.overflowed = true
		t.used = int(float64(t.window) * t.set.CompactThreshold)
		return t.maybeAutoCompact()
	case hookTextStep:
		return t.textStep(st)
	case hookCancelled:
		return t.ctx.Err() != nil
	case hookSteerOrEnd:
		return t.steerOrEnd()
	case hookSteer:
		return t.steer()
	case hookTextUnfinished:
		return t.unfinishedNudge()
	case hookTruncated:
		return t.noticeTruncated(false)
	case hookRequiredTool:
		return t.nudgeRequiredTool(st)
	case hookUnfinished:
		return t.nudgeUnfinished(st)
	case hookStopHooks:
		return t.stopHook()
	case hookReview:
		t.reviewAnswer(st)
		return true
	case hookRunCutCalls:
		t.nudges.ranTools = true
		for _, c := range st.calls {
			if c.invalid == "" {
				c.invalid = t.texts().Render("loop.call_truncated", nil)
			}
		}
		t.runCalls(st.calls)
		return true
	case hookTruncatedCalls:
		return t.noticeTruncated(true)
	case hookRunCalls:
		t.nudges.ranTools = true
		return t.runCalls(st.calls)
	case hookRefreshLive:
		t.live = t.liveContext()
		return true
	}
	return false
}
