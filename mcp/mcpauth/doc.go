// Package mcpauth owns agentd's side of MCP authorization for HTTP servers: on a 401 it discovers
// the server's protected-resource metadata (RFC 9728) and its authorization server's metadata
// (RFC 8414), registers agentd (a client the user registered beforehand, bound to its issuer;
// else a Client ID Metadata Document when one is configured and the server takes it; else
// dynamic registration, RFC 7591), runs the authorization code grant with
// PKCE (S256) through a loopback listener of its own, checks the callback's state and iss
// (RFC 9207), and keeps the tokens in a secret store by issuer and resource, refreshed before
// they expire by one token source per issuer and resource that every live connection shares.
// A 403 insufficient_scope asks for a sign-in with the union of the scopes held and asked (once:
// a scope already asked for is not asked again), and a resource whose metadata names a new
// authorization server gets none of the old one's tokens or client again.
//
// The SDK's pieces are used where they fit: oauthex fetches and checks both metadata documents
// (issuer match, PKCE offered, https or loopback endpoints, no script URLs, no redirect into a
// private network) and registers the client; golang.org/x/oauth2 builds the PKCE request,
// exchanges the code and refreshes. The SDK's own auth.AuthorizationCodeHandler is not used:
// it falls back silently when the resource metadata is refused (a resource that does not match
// the server is skipped, not refused), keeps its token in memory per handler (one per
// connection, so a refresh would not reach the others), and cannot find a stored token before it
// asks the user. Handler implements the SDK's auth.OAuthHandler, so the SDK's Streamable HTTP
// transport calls it on a 401 as it would its own.
package mcpauth
