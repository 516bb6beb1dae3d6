// Package transcribe turns speech into text through an OpenAI-compatible
// POST {baseUrl}/audio/transcriptions (OpenAI, whisper.cpp's server, faster-whisper's
// OpenAI-compatible servers): a multipart/form-data request with the audio as `file`, the
// `model` and `response_format=json`, answered {"text": "..."}.
package transcribe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/providers"
)

// MaxAudio is the largest audio accepted, OpenAI's limit for one upload.
const MaxAudio = 25 << 20

// Doer sends the request; providers' transport when nil.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// extensions name the upload's file by its type: servers pick the decoder by the file name.
var extensions = map[string]string{
	"audio/webm": "webm", "audio/ogg": "ogg", "audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
	"audio/mpeg": "mp3", "audio/mp3": "mp3", "audio/mp4": "m4a", "audio/m4a": "m4a", "audio/x-m4a": "m4a",
	"audio/flac": "flac", "audio/x-flac": "flac",
}

// CheckMIME says whether mimeType is an audio type the endpoint decodes; parameters such as
// "audio/webm;codecs=opus" are allowed.
func CheckMIME(mimeType string) error {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil || extensions[mt] == "" {
		return fmt.Errorf("must be one of the audio types the endpoint decodes (audio/webm, audio/ogg, audio/wav, audio/mpeg, audio/mp4, audio/flac), got %q", mimeType)
	}
	return nil
}

// Transcribe sends audio to cfg's /audio/transcriptions with model and returns the text.
func Transcribe(ctx context.Context, doer Doer, cfg providers.Config, model string, audio []byte, mimeType string) (string, error) {
	if err := CheckMIME(mimeType); err != nil {
		return "", err
	}
	if len(audio) == 0 || len(audio) > MaxAudio {
		return "", fmt.Errorf("the audio must be 1 byte to %d MB, got %d bytes", MaxAudio>>20, len(audio))
	}
	mt, _, _ := mime.ParseMediaType(mimeType)
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="audio.%s"`, extensions[mt]))
	h.Set("Content-Type", mimeType)
	part, err := w.CreatePart(h)
	if err != nil {
		return "", err
	}
	part.Write(audio)
	w.WriteField("model", model)
	w.WriteField("response_format", "json")
	if err := w.Close(); err != nil {
		return "", err
	}
	url := strings.TrimRight(cfg.BaseURL, "/") + "/audio/transcriptions"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &body)
	if err != nil {
		return "", err
	}
	hr.Header.Set("Content-Type", w.FormDataContentType())
	for k, v := range cfg.Headers {
		hr.Header.Set(k, v)
	}
	if cfg.APIKey != "" && hr.Header.Get("Authorization") == "" {
		hr.Header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	if doer == nil {
		doer = &http.Client{Transport: providers.HTTPTransport, CheckRedirect: providers.CheckRedirect}
	}
	resp, err := doer.Do(hr)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("%s answered %d: %s", providers.Origin(url), resp.StatusCode, redact(clip.String(strings.TrimSpace(string(raw)), 200, "…"), cfg))
	}
	var out struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Text == nil {
		return "", errors.New(providers.Origin(url) + " answered with something that is not a transcription ({\"text\": ...})")
	}
	return strings.TrimSpace(*out.Text), nil
}

// redact keeps the key and credential headers out of an error the user sees.
func redact(msg string, cfg providers.Config) string {
	for _, s := range append([]string{cfg.APIKey}, headerValues(cfg)...) {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return msg
}

func headerValues(cfg providers.Config) []string {
	var out []string
	for _, v := range cfg.Headers {
		out = append(out, v)
	}
	return out
}
