package mcp

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkOutput validates a result's structuredContent against the tool's outputSchema, as the
// spec asks of clients (the SDK's client does not): "" when it matches, when the tool declares
// no schema, or when the result is an error; else why not, which fails the call (the model is
// not handed data the tool said it would not send). A schema that does not resolve is not held
// against the result: the server's mistake in its listing costs no call.
func checkOutput(schema any, res *sdk.CallToolResult) string {
	if schema == nil || res == nil || res.IsError {
		return ""
	}
	if res.StructuredContent == nil {
		return "the tool declares an outputSchema but returned no structuredContent"
	}
	raw, err := json.Marshal(schema)
	if err != nil || len(raw) > maxSchema {
		return ""
	}
	var s jsonschema.Schema
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return ""
	}
	// The value is validated as JSON decodes it (numbers as float64, objects as maps).
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return "its structuredContent is not JSON"
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return "its structuredContent is not JSON"
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Sprintf("its structuredContent does not match the tool's outputSchema: %s", Clean(err.Error(), 300))
	}
	return ""
}
