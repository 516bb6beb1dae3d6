package acceptance_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// conformanceKnown are the client scenarios of @modelcontextprotocol/conformance agentd fails,
// each with its reason (docs/protocol.md, "MCP conformance", says the same). Every other client
// scenario must pass, and a scenario here that starts passing fails the test until it is taken
// out.
var conformanceKnown = map[string]string{
	// OAuth is another branch's work (issue 29 item 2): until it lands agentd sends no token.
	"auth/metadata-default":                     "waiting for the OAuth branch",
	"auth/metadata-var1":                        "waiting for the OAuth branch",
	"auth/metadata-var2":                        "waiting for the OAuth branch",
	"auth/metadata-var3":                        "waiting for the OAuth branch",
	"auth/basic-cimd":                           "waiting for the OAuth branch",
	"auth/scope-from-www-authenticate":          "waiting for the OAuth branch",
	"auth/scope-from-scopes-supported":          "waiting for the OAuth branch",
	"auth/scope-omitted-when-undefined":         "waiting for the OAuth branch",
	"auth/scope-step-up":                        "waiting for the OAuth branch",
	"auth/scope-retry-limit":                    "waiting for the OAuth branch",
	"auth/token-endpoint-auth-basic":            "waiting for the OAuth branch",
	"auth/token-endpoint-auth-post":             "waiting for the OAuth branch",
	"auth/token-endpoint-auth-none":             "waiting for the OAuth branch",
	"auth/pre-registration":                     "waiting for the OAuth branch",
	"auth/2025-03-26-oauth-metadata-backcompat": "waiting for the OAuth branch",
	"auth/2025-03-26-oauth-endpoint-fallback":   "waiting for the OAuth branch",
	"auth/resource-mismatch":                    "waiting for the OAuth branch",
	"auth/offline-access-scope":                 "waiting for the OAuth branch",
	"auth/offline-access-not-supported":         "waiting for the OAuth branch",
	"auth/authorization-server-migration":       "waiting for the OAuth branch",
	"auth/iss-supported":                        "waiting for the OAuth branch",
	"auth/iss-not-advertised":                   "waiting for the OAuth branch",
	"auth/iss-supported-missing":                "waiting for the OAuth branch",
	"auth/iss-wrong-issuer":                     "waiting for the OAuth branch",
	"auth/iss-unexpected":                       "waiting for the OAuth branch",
	"auth/iss-normalized":                       "waiting for the OAuth branch",
	"auth/metadata-issuer-mismatch":             "waiting for the OAuth branch",
	// Extensions the SDK's own client does not implement either (its conformance/baseline.yml).
	"auth/client-credentials-jwt":           "OAuth client credentials (extension): not in the Go SDK",
	"auth/client-credentials-basic":         "OAuth client credentials (extension): not in the Go SDK",
	"auth/enterprise-managed-authorization": "enterprise-managed authorization (extension): not in the Go SDK",
	"auth/dpop":                             "DPoP, SEP-1932 (extension): not in the Go SDK",
	"auth/dpop-nonce":                       "DPoP, SEP-1932 (extension): not in the Go SDK",
	"auth/wif-jwt-bearer":                   "workload identity federation, SEP-1933 (extension): not in the Go SDK",
}

// conformanceSuite finds the suite where scripts/test.sh installs it (or at
// $AGENTD_MCP_CONFORMANCE, its install prefix); without it (or node) the test skips, and fails
// under CI.
func conformanceSuite(t *testing.T) (node string, args []string) {
	t.Helper()
	dir := os.Getenv("AGENTD_MCP_CONFORMANCE")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "agentd-test", "mcp-conformance")
	}
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node, err := exec.LookPath("node")
	_, serr := os.Stat(entry)
	if err != nil || serr != nil {
		msg := "@modelcontextprotocol/conformance (or node) is not installed; scripts/test.sh installs it, or set AGENTD_MCP_CONFORMANCE to its install prefix"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out, _ := exec.Command(node, "--version").Output()
	major, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(strings.TrimSpace(string(out)), ".", 2)[0], "v"))
	if major < 22 {
		shim, _ := filepath.Abs(filepath.Join("testdata", "node20", "register.mjs"))
		args = append(args, "--import", shim)
	}
	return node, append(args, entry)
}

var suiteLine = regexp.MustCompile(`^(✓|✗) (\S+): (\d+) passed, (\d+) failed`)

// The official MCP conformance suite's client scenarios, run against `agentd mcp probe` (agentd's
// client as a session uses it): every scenario passes but the known ones, which fail.
func TestMCPConformanceClientScenarios(t *testing.T) {
	node, args := conformanceSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append(args, "client", "--command", binPath+" mcp probe", "--suite", "all")...)
	cmd.Dir = t.TempDir() // the suite writes its results/ there
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run() // its exit code counts the known failures too; the summary decides
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		m := suiteLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		seen++
		name, ok := m[2], m[1] == "✓"
		reason, known := conformanceKnown[name]
		switch {
		case !ok && !known:
			t.Errorf("scenario %s fails (%s passed, %s failed)", name, m[3], m[4])
		case ok && known:
			t.Errorf("scenario %s now passes: take it out of conformanceKnown (%q)", name, reason)
		}
	}
	if seen < 10 {
		t.Fatalf("the suite's summary lists %d scenarios; its output:\n%s", seen, out.String())
	}
	if t.Failed() {
		t.Logf("the suite's output:\n%s", out.String())
	}
}
