package protocol

import (
	"slices"
	"strconv"
)

// MarshalJSON writes the session/new answer without reflection, byte for byte what json.Marshal
// writes for the same fields (TestSessionNewResultMatchesMarshal): encoding/json would build and
// keep a per-type encoder for the answer and each type in it (field lists, names, maps), about
// 100 KB of heap that stays resident in an idle daemon, to write one answer per session.
func (r SessionNewResult) MarshalJSON() ([]byte, error) {
	dst := make([]byte, 0, 1024)
	dst = append(dst, `{"sessionId":`...)
	dst = appendString(dst, r.SessionID)
	dst = append(dst, `,"configOptions":`...)
	if r.ConfigOptions == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendConfigOptions(dst, r.ConfigOptions)
	}
	if r.Modes != nil {
		dst = append(dst, `,"modes":{"currentModeId":`...)
		dst = appendString(dst, r.Modes.CurrentModeID)
		dst = append(dst, `,"availableModes":`...)
		if r.Modes.AvailableModes == nil {
			dst = append(dst, "null"...)
		} else {
			dst = append(dst, '[')
			for i := range r.Modes.AvailableModes {
				if i > 0 {
					dst = append(dst, ',')
				}
				m := &r.Modes.AvailableModes[i]
				dst = append(dst, `{"id":`...)
				dst = appendString(dst, m.ID)
				dst = append(dst, `,"name":`...)
				dst = appendString(dst, m.Name)
				if m.Description != "" {
					dst = append(dst, `,"description":`...)
					dst = appendString(dst, m.Description)
				}
				dst = append(dst, '}')
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	if len(r.Meta) > 0 {
		dst = append(dst, `,"_meta":`...)
		dst = AppendMeta(dst, r.Meta)
	}
	return append(dst, '}'), nil
}

// AppendMeta writes a free-form object (a _meta) as json.Marshal does (keys sorted), a provider
// list by hand (AppendProviderInfos) and any other value through json.Marshal; a value that
// cannot be encoded is written as null.
func AppendMeta(dst []byte, m map[string]any) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendAny(dst, m[k])
	}
	return append(dst, '}')
}

// AppendJSONString appends s as json.Marshal writes a string (HTML characters, U+2028 and U+2029
// escaped; invalid UTF-8 as U+FFFD), for other packages' hand-written encoders.
func AppendJSONString(dst []byte, s string) []byte { return appendString(dst, s) }

// MarshalJSON writes what encoding/json writes for the tagged fields, by hand: session/new's
// answer carries these in the model option's _meta, and encoding/json would build and keep an
// encoder for the type to write them.
func (c PromptCapabilities) MarshalJSON() ([]byte, error) {
	dst := append(make([]byte, 0, 64), `{"image":`...)
	dst = strconv.AppendBool(dst, c.Image)
	dst = append(dst, `,"audio":`...)
	dst = strconv.AppendBool(dst, c.Audio)
	dst = append(dst, `,"embeddedContext":`...)
	dst = strconv.AppendBool(dst, c.EmbeddedContext)
	return append(dst, '}'), nil
}
