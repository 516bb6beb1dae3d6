package session

import "context"

type afterAnswerKey struct{}

// WithAfterAnswer returns a context for a Manager call under which the updates that must follow
// the call's answer are handed to schedule instead of being sent before the call returns. The
// caller (the rpc server) runs each scheduled function once the answer is queued in its ordered
// writer, so what it sends goes out after the answer. This is
// for agent/session/new: its available_commands_update names a session the client learns only
// from the answer, so a client that routes updates by session id would drop it if it came first.
func WithAfterAnswer(ctx context.Context, schedule func(fn func())) context.Context {
	return context.WithValue(ctx, afterAnswerKey{}, schedule)
}

// AfterAnswer runs fn after the answer of the call ctx belongs to, through the scheduler of
// WithAfterAnswer; without one (agentd exec, tests) it runs fn at once.
func AfterAnswer(ctx context.Context, fn func()) {
	if schedule, ok := ctx.Value(afterAnswerKey{}).(func(func())); ok && schedule != nil {
		schedule(fn)
		return
	}
	fn()
}
