package rpc

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/agentd-dev/agentd/jsonrpc"
	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/transcribe"
)

// The inference router's one-off methods (PROTOCOL.md v1.2, "Completions and the inference
// router"): client features such as a commit message or an explanation of the selection ask the
// user's model directly, outside any session; speech goes to the transcription model.
const (
	MethodInfer      = "agent/x/infer"
	MethodInferChunk = "agent/x/infer/chunk"
	MethodTranscribe = "agent/x/transcribe"
)

// maxInferPrompt bounds a one-off prompt (characters): these are for a selection or a diff,
// not a whole repository.
const maxInferPrompt = 1 << 20

type inferParams struct {
	System string `json:"system,omitempty"`
	Prompt string `json:"prompt"`
	// Model overrides the default provider's model.
	Model string `json:"model,omitempty"`
}

type inferChunk struct {
	RequestID jsonrpc.ID `json:"requestId"`
	Text      string     `json:"text"`
}

type textResult struct {
	Text string `json:"text"`
}

func validateInfer(p *inferParams) error {
	if strings.TrimSpace(p.Prompt) == "" {
		return paramError("prompt", "must not be empty")
	}
	if len(p.Prompt)+len(p.System) > maxInferPrompt {
		return paramError("prompt", "is longer than 1 MB with the system text")
	}
	return nil
}

type requestIDKey struct{}

// withRequestID remembers the JSON-RPC id of the request a handler answers, for notifications
// that name it (agent/x/infer/chunk).
func withRequestID(ctx context.Context, id jsonrpc.ID) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

func requestID(ctx context.Context) jsonrpc.ID {
	id, _ := ctx.Value(requestIDKey{}).(jsonrpc.ID)
	return id
}

// infer answers agent/x/infer with the default provider: each piece of text is streamed as
// agent/x/infer/chunk before the answer carries the whole text.
func (s *Server) infer(ctx context.Context, p *inferParams) (textResult, error) {
	set := s.settings.Get()
	if set.Provider == "" {
		return textResult{}, errors.New("no provider is configured: set provider in the settings")
	}
	prov, cfg, err := s.provs.Provider(ctx, set.Provider)
	if err != nil {
		return textResult{}, err
	}
	model := p.Model
	if model == "" {
		model = cfg.Model
	}
	req := &providers.Request{
		Model:    model,
		System:   p.System,
		Messages: []providers.Message{{Role: providers.RoleUser, Parts: []providers.Part{{Type: providers.PartText, Text: p.Prompt}}}},
	}
	id := requestID(ctx)
	var out strings.Builder
	for ev := range prov.Stream(ctx, req) {
		switch ev.Type {
		case providers.EventTextDelta:
			if ev.Text == "" {
				continue
			}
			out.WriteString(ev.Text)
			if id.IsValid() {
				if err := s.conn.Notify(ctx, MethodInferChunk, inferChunk{RequestID: id, Text: ev.Text}); err != nil {
					return textResult{}, err
				}
			}
		case providers.EventFailed:
			if ev.Err != nil {
				return textResult{}, ev.Err
			}
			return textResult{}, errors.New("the model failed")
		}
	}
	if err := ctx.Err(); err != nil {
		return textResult{}, err
	}
	return textResult{Text: out.String()}, nil
}

type transcribeParams struct {
	// Audio is the recording, base64 on the wire; validate decodes it into audio.
	Audio    string `json:"audio"`
	MimeType string `json:"mimeType"`
	audio    []byte
}

func validateTranscribe(p *transcribeParams) error {
	if p.Audio == "" {
		return paramError("audio", "must be the recording, base64-encoded")
	}
	if base64.StdEncoding.DecodedLen(len(p.Audio)) > transcribe.MaxAudio+2 {
		return paramError("audio", "is larger than 25 MB")
	}
	audio, err := base64.StdEncoding.DecodeString(p.Audio)
	if err != nil {
		return paramError("audio", "is not base64: "+err.Error())
	}
	if len(audio) > transcribe.MaxAudio {
		return paramError("audio", "is larger than 25 MB")
	}
	p.audio = audio
	if err := transcribe.CheckMIME(p.MimeType); err != nil {
		return paramError("mimeType", err.Error())
	}
	return nil
}

// transcribe answers agent/x/transcribe through the transcription provider's
// /audio/transcriptions.
func (s *Server) transcribe(ctx context.Context, p *transcribeParams) (textResult, error) {
	set := s.settings.Get().Transcription
	if set.Provider == "" || set.Model == "" {
		return textResult{}, errors.New("transcription is off: set transcription.provider and transcription.model in the user's settings")
	}
	_, cfg, err := s.provs.Provider(ctx, set.Provider)
	if err != nil {
		return textResult{}, err
	}
	text, err := transcribe.Transcribe(ctx, nil, cfg, set.Model, p.audio, p.MimeType)
	if err != nil {
		return textResult{}, err
	}
	return textResult{Text: text}, nil
}
