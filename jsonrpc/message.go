package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/protocol"
)

// ID is a JSON-RPC request id: an integer or a string. The zero ID is "no id" (a notification,
// or the null id of an answer to a message that could not be read).
type ID struct {
	str  string
	num  int64
	kind idKind
}

type idKind uint8

const (
	idNone idKind = iota
	idNumber
	idString
)

// NewNumberID returns the integer id v.
func NewNumberID(v int64) ID { return ID{num: v, kind: idNumber} }

// NewStringID returns the string id v.
func NewStringID(v string) ID { return ID{str: v, kind: idString} }

// IsValid reports whether the id is set.
func (id ID) IsValid() bool { return id.kind != idNone }

// Number returns the integer value of a numeric id.
func (id ID) Number() (int64, bool) { return id.num, id.kind == idNumber }

// StringValue returns the value of a string id.
func (id ID) StringValue() (string, bool) { return id.str, id.kind == idString }

// Format writes the id as the peer sent it (a string id unquoted), "null" when unset; %q quotes
// a string id and marks a number with '#'.
func (id ID) Format(f fmt.State, r rune) {
	var s string
	switch id.kind {
	case idString:
		s = id.str
		if r == 'q' {
			s = strconv.Quote(id.str)
		}
	case idNumber:
		s = strconv.FormatInt(id.num, 10)
		if r == 'q' {
			s = "#" + s
		}
	default:
		s = "null"
	}
	_, _ = io.WriteString(f, s)
}

// MarshalJSON writes the id as the peer sent it: a number, a string, or null.
func (id ID) MarshalJSON() ([]byte, error) { return id.appendTo(nil), nil }

func (id ID) appendTo(dst []byte) []byte {
	switch id.kind {
	case idNumber:
		return strconv.AppendInt(dst, id.num, 10)
	case idString:
		return protocol.AppendJSONString(dst, id.str)
	}
	return append(dst, "null"...)
}

// decodeID reads an id value: null (ok, unset), a string, or an integer without fraction or
// exponent that fits 64 bits.
func decodeID(raw []byte) (ID, bool) {
	if len(raw) == 0 {
		return ID{}, false
	}
	switch raw[0] {
	case 'n':
		return ID{}, string(raw) == "null"
	case '"':
		s, ok := unquote(raw)
		if !ok {
			return ID{}, false
		}
		return NewStringID(s), true
	}
	for i, c := range raw {
		if (c < '0' || c > '9') && (c != '-' || i > 0) {
			return ID{}, false
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return ID{}, false
	}
	return NewNumberID(n), true
}

// Code is a JSON-RPC error code.
type Code int32

// The error codes of JSON-RPC 2.0 and the LSP that the transport and the server answer with.
const (
	ParseError           Code = -32700
	InvalidRequest       Code = -32600
	MethodNotFound       Code = -32601
	InvalidParams        Code = -32602
	InternalError        Code = -32603
	ServerNotInitialized Code = -32002
)

// WireError is the error object of an answer: what a Handler returns to answer with a given
// code (an error that is not one is answered with its text and code 0, or the code of a
// WireError it wraps), and what an error answer from the peer decodes to. Its text is its
// message.
type WireError struct {
	Code    Code
	Message string
	Data    json.RawMessage // omitted from the wire when empty
}

func (e *WireError) Error() string { return e.Message }

// NewError returns the error object with code c and message msg.
func NewError(c Code, msg string) *WireError { return &WireError{Code: c, Message: msg} }

// Errorf returns the error object with code c and a formatted message.
func Errorf(c Code, format string, args ...any) *WireError {
	return &WireError{Code: c, Message: fmt.Sprintf(format, args...)}
}

// toWireError turns a handler's error into the error object written: a *WireError (or one
// wrapped with the same text) verbatim; otherwise the error's text, with the code and data of a
// *WireError it wraps.
func toWireError(err error) *WireError {
	var we *WireError
	if errors.As(err, &we) && we.Error() == err.Error() {
		return we
	}
	out := &WireError{Message: err.Error()}
	if we != nil {
		out.Code, out.Data = we.Code, we.Data
	}
	return out
}

// Request is an incoming request or notification. Its method and params are its own (copied
// out of the frame), so a handler may keep them.
type Request struct {
	id     ID
	method string
	params json.RawMessage
	call   bool
}

// ID is the request's id; unset for a notification.
func (r *Request) ID() ID { return r.id }

// Method is the request's method.
func (r *Request) Method() string { return r.method }

// Params are the request's params as sent; nil when absent or null.
func (r *Request) Params() json.RawMessage { return r.params }

// IsCall reports whether the request expects an answer (it has an id).
func (r *Request) IsCall() bool { return r.call }

// message is one decoded incoming message: a request (isReq, req) or an answer.
type message struct {
	req    Request
	isReq  bool
	id     ID
	result json.RawMessage
	err    *WireError
}

var (
	errParse   = errors.New("JSON-RPC parse error")
	errInvalid = errors.New("JSON-RPC invalid request")
)

// fields are the spans of an object's top-level members that JSON-RPC names, each as it appears
// in the body (a string with its quotes). Other members are skipped.
type fields struct {
	jsonrpc, id, method, params, result, error       []byte
	hasID, hasMethod, hasParams, hasResult, hasError bool
	methodAt                                         int // offset of the method's value in the body
}

// scanObject records the top-level members of the JSON object body and reports whether body is
// one valid JSON object (as json.Valid checks it), in one pass: internal/jscan's strict walk.
func scanObject(body []byte, f *fields) bool {
	i := jscan.SkipWS(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	i = jscan.SkipWS(body, i+1)
	if i < len(body) && body[i] == '}' {
		return jscan.SkipWS(body, i+1) == len(body)
	}
	for {
		i = jscan.SkipWS(body, i)
		kend := jscan.ValidStringEnd(body, i)
		if kend < 0 {
			return false
		}
		key := body[i:kend]
		i = jscan.SkipWS(body, kend)
		if i >= len(body) || body[i] != ':' {
			return false
		}
		i = jscan.SkipWS(body, i+1)
		vend := jscan.ValidValueEnd(body, i)
		if vend < 0 {
			return false
		}
		val := body[i:vend]
		switch string(key) {
		case `"jsonrpc"`:
			f.jsonrpc = val
		case `"id"`:
			f.id, f.hasID = val, true
		case `"method"`:
			f.method, f.hasMethod, f.methodAt = val, true, i
		case `"params"`:
			f.params, f.hasParams = val, true
		case `"result"`:
			f.result, f.hasResult = val, true
		case `"error"`:
			f.error, f.hasError = val, true
		}
		i = jscan.SkipWS(body, vend)
		if i >= len(body) {
			return false
		}
		switch body[i] {
		case ',':
			i++
		case '}':
			return jscan.SkipWS(body, i+1) == len(body)
		default:
			return false
		}
	}
}

// unquote decodes a JSON string value.
func unquote(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// decodeMessage decodes one message body the way JSON-RPC 2.0 reads it: an object with
// "jsonrpc":"2.0" and a method is a request (a call with a string or integer id, a notification
// without an id or with a null one); one without a method is an answer carrying exactly one of
// result and error. A batch, a body that is not a JSON object and a mix of request and answer
// members are refused. Everything returned is copied out of body.
func decodeMessage(body []byte) (*message, error) {
	i := jscan.SkipWS(body, 0)
	if i < len(body) && body[i] == '[' {
		return nil, errInvalid
	}
	var f fields
	if !scanObject(body, &f) {
		return nil, errParse
	}
	if string(f.jsonrpc) != `"2.0"` {
		return nil, errInvalid
	}
	switch {
	case f.hasMethod && !f.hasResult && !f.hasError:
		method, ok := unquote(f.method)
		if !ok {
			return nil, errInvalid
		}
		m := &message{isReq: true}
		r := &m.req
		r.method = method
		if f.hasParams && string(f.params) != "null" {
			r.params = bytes.Clone(f.params)
		}
		if f.hasID && string(f.id) != "null" {
			if r.id, ok = decodeID(f.id); !ok {
				return nil, errInvalid
			}
			r.call = true
		}
		return m, nil
	case f.hasMethod, f.hasResult == f.hasError:
		return nil, errInvalid
	}
	m := &message{}
	if f.hasID {
		var ok bool
		if m.id, ok = decodeID(f.id); !ok {
			return nil, errInvalid
		}
	}
	if f.hasError {
		var e struct {
			Code    *json.Number    `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if f.error[0] != '{' || json.Unmarshal(f.error, &e) != nil {
			return nil, errInvalid
		}
		m.err = &WireError{Data: e.Data}
		if e.Code != nil {
			n, err := strconv.ParseInt(string(*e.Code), 10, 32)
			if err != nil {
				return nil, errInvalid
			}
			m.err.Code = Code(n)
		}
		if e.Message != nil {
			m.err.Message = *e.Message
		}
		return m, nil
	}
	m.result = bytes.Clone(f.result)
	return m, nil
}

// Kind is what a scanned message is.
type Kind int

const (
	KindInvalid Kind = iota
	KindCall
	KindNotification
	KindAnswer
)

// View locates the parts of a message body without decoding it (see Scan).
type View struct {
	Kind Kind
	// Method is the method's value as written, quotes included: body[MethodAt:MethodAt+len(Method)].
	Method   []byte
	MethodAt int
}

// Scan says what body is and where its method's value lies, for a translator that rewrites
// methods in place (the ACP door). It decodes nothing; ok is false for a body that is not one
// valid JSON object.
func Scan(body []byte) (v View, ok bool) {
	var f fields
	if !scanObject(body, &f) {
		return View{}, false
	}
	switch {
	case f.hasMethod && !f.hasResult && !f.hasError:
		v.Kind = KindNotification
		if f.hasID && string(f.id) != "null" {
			v.Kind = KindCall
		}
		v.Method, v.MethodAt = f.method, f.methodAt
	case !f.hasMethod && (f.hasResult || f.hasError):
		v.Kind = KindAnswer
	}
	return v, true
}

const envelope = `{"jsonrpc":"2.0"`

// appendCall appends a request: {"jsonrpc":"2.0","method":…,"params":…,"id":…}.
func appendCall(dst []byte, id ID, method string, params []byte) []byte {
	dst = appendNotification(dst, method, params)
	dst = append(dst[:len(dst)-1], `,"id":`...)
	dst = id.appendTo(dst)
	return append(dst, '}')
}

// appendNotification appends a notification; params are left out when empty.
func appendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, envelope+`,"method":`...)
	dst = protocol.AppendJSONString(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// appendResponse appends an answer: the result (null when empty), or the error object when err
// is set.
func appendResponse(dst []byte, id ID, result []byte, err *WireError) []byte {
	dst = append(dst, envelope+`,"id":`...)
	dst = id.appendTo(dst)
	if err != nil {
		dst = append(dst, `,"error":{"code":`...)
		dst = strconv.AppendInt(dst, int64(err.Code), 10)
		dst = append(dst, `,"message":`...)
		dst = protocol.AppendJSONString(dst, err.Message)
		if len(err.Data) > 0 {
			dst = append(dst, `,"data":`...)
			dst = append(dst, err.Data...)
		}
		return append(dst, "}}"...)
	}
	dst = append(dst, `,"result":`...)
	if len(result) == 0 {
		return append(dst, "null}"...)
	}
	dst = append(dst, result...)
	return append(dst, '}')
}

// DecodeRequest decodes body as the connection reads it and returns the request it holds (nil
// for an answer), for a translator's tests.
func DecodeRequest(body []byte) (*Request, error) {
	m, err := decodeMessage(body)
	if err != nil || !m.isReq {
		return nil, err
	}
	return &m.req, nil
}
