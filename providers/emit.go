package providers

// Emitter wraps the yield function of a Provider.Stream iterator and enforces the stream
// contract for the dialect: once the consumer stops (yield returned false) nothing more is
// yielded, and exactly one Completed or Failed event ends the stream. Dialects call Complete or
// Fail where they know the outcome and Finish on the way out, which fails a stream that forgot.
type Emitter struct {
	yield     func(Event) bool
	stopped   bool
	ended     bool
	completed bool
}

// NewEmitter wraps yield.
func NewEmitter(yield func(Event) bool) *Emitter { return &Emitter{yield: yield} }

// Emit yields ev unless the consumer has gone or the stream has ended. It reports whether the
// consumer wants more.
func (e *Emitter) Emit(ev Event) bool {
	if e.stopped || e.ended {
		return false
	}
	if !e.yield(ev) {
		e.stopped = true
		return false
	}
	return true
}

// Notice emits a notice event (a retry, a fallback); it fits httpsse.Call.Notice.
func (e *Emitter) Notice(text string) bool { return e.Emit(Event{Type: EventNotice, Text: text}) }

// Complete ends the stream with a Completed event.
func (e *Emitter) Complete(stop StopReason) {
	if e.ended {
		return
	}
	e.Emit(Event{Type: EventCompleted, StopReason: stop})
	e.ended = true
	e.completed = true
}

// Completed reports whether the stream ended with a Completed event: the dialect read the whole
// answer (httpsse.Stream.Release keeps the connection then).
func (e *Emitter) Completed() bool { return e.completed }

// Fail ends the stream with a Failed event.
func (e *Emitter) Fail(err *Error) {
	if e.ended {
		return
	}
	if err == nil {
		err = &Error{Kind: ErrServer, Message: "The provider failed without saying why; try again."}
	}
	e.Emit(Event{Type: EventFailed, Err: err})
	e.ended = true
}

// Stopped reports whether the consumer broke out of the range.
func (e *Emitter) Stopped() bool { return e.stopped }

// Ended reports whether the terminal event was emitted (or the consumer is gone).
func (e *Emitter) Ended() bool { return e.ended || e.stopped }

// Finish fails the stream with err if no terminal event was emitted yet. Dialects defer it.
func (e *Emitter) Finish(err *Error) {
	if !e.ended && !e.stopped {
		e.Fail(err)
	}
}
