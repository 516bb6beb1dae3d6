package session

import (
	"regexp"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/prompts"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// Bounds of the evidence an answer review is sent: each tool result's first part, and all of
// them together, so the review request stays a fraction of the context window.
const (
	reviewEvidencePart  = 8 << 10
	reviewEvidenceTotal = 48 << 10
	reviewAnswerMax     = 32 << 10
)

// reviewEnvelope matches what could close an envelope the review request wraps text in.
var reviewEnvelope = regexp.MustCompile(`(?i)</\s*(evidence|answer|request)\b`)

func escapeReview(text string) string {
	return reviewEnvelope.ReplaceAllStringFunc(text, func(m string) string { return "<\\/" + m[2:] })
}

// reviewAnswer is the answer-review pass (setting answerReview, off by default). When the turn
// ends on an answer holding code (a fenced block), the model is asked once more, without tools,
// to check that answer against the evidence the turn's tools gathered (answer_review.request),
// ending its reply on answer_review.end_marker. The outcome:
//   - a reply without the end marker (cut off, or the request failed) keeps the answer as it is;
//   - a reply that is answer_review.approved keeps it too;
//   - any other reply is the corrected answer: the user is shown it after the first answer,
//     under answer_review.heading (what was streamed cannot be taken back), and it replaces the
//     first answer's text in the history, so the model goes on from the corrected one.
func (t *turn) reviewAnswer(st *step) {
	if !t.set.AnswerReview || t.nudges.reviewed || t.ctx.Err() != nil {
		return
	}
	answer := stepText(st)
	if !strings.Contains(answer, "```") {
		return
	}
	t.nudges.reviewed = true
	s := t.s
	texts := t.texts()
	hist := s.historySnapshot()
	var request strings.Builder
	var evidence []map[string]any
	budget := reviewEvidenceTotal
	for i := t.nudges.start; i < len(hist); i++ {
		for _, p := range hist[i].Parts {
			switch {
			case i == t.nudges.start && p.Type == providers.PartText:
				request.WriteString(p.Text)
			case p.Type == providers.PartToolResult && budget > 0:
				out := clip.String(p.Text, min(reviewEvidencePart, budget), "\n[…cut]")
				budget -= len(out)
				evidence = append(evidence, map[string]any{"TOOL": p.ToolName, "OUTPUT": escapeReview(out)})
			}
		}
	}
	run := prompts.Run{
		"REQUEST":  escapeReview(clip.String(request.String(), 8<<10, "\n[…cut]")),
		"ANSWER":   escapeReview(clip.String(answer, reviewAnswerMax, "\n[…cut]")),
		"EVIDENCE": evidence,
	}
	req := &providers.Request{
		Model:     t.pcfg.Model,
		System:    texts.Render("answer_review.system", nil),
		Messages:  []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: texts.Render("answer_review.request", run)}}}},
		MaxTokens: t.set.MaxTokens,
	}
	reply, calls, err := t.s.m.collectSide(t.ctx, t.set, t.prov, t.pcfg, req)
	t.addSide(calls)
	outcome := "kept"
	defer func() { s.m.trace.event(s.id, "answer_review", map[string]any{"outcome": outcome}) }()
	if err != nil {
		outcome = "failed"
		s.m.log.Warn("answer review failed: " + err.Error())
		return
	}
	body, ok := strings.CutSuffix(strings.TrimSpace(reply), texts.Render("answer_review.end_marker", nil))
	if !ok {
		outcome = "cut" // no end marker: the review did not finish, so it says nothing
		return
	}
	body = strings.TrimSpace(body)
	if body == "" || body == texts.Render("answer_review.approved", nil) {
		outcome = "approved"
		return
	}
	outcome = "corrected"
	shown := texts.Render("answer_review.heading", nil) + "\n\n" + body
	msgID := s.nextMessageID()
	u := protocol.SessionUpdate{SessionUpdate: protocol.UpdateAgentMessageChunk, MessageID: msgID, Content: &protocol.ContentBlock{Type: "text", Text: shown}}
	s.update(u)
	s.record(record{T: recUpdate, Update: &u})
	s.mu.Lock()
	n := len(s.history) - 1
	if n < t.nudges.start || s.history[n].Role != providers.RoleAssistant {
		s.mu.Unlock()
		return
	}
	amended := providers.Message{Role: providers.RoleAssistant}
	for _, p := range s.history[n].Parts {
		if p.Type != providers.PartText {
			amended.Parts = append(amended.Parts, p)
		}
	}
	amended.Parts = append(amended.Parts, providers.Part{Type: providers.PartText, Text: body})
	s.history[n] = amended
	s.histGen++
	s.mu.Unlock()
	s.record(record{T: recAmend, Message: &amended})
}
