package tools

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"golang.org/x/net/idna"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/tools/web"
)

type webFetchIn struct {
	URL string `json:"url" schema:"maxLength=4096"`
}

func (in webFetchIn) title() string {
	if strings.TrimSpace(in.URL) == "" {
		return ""
	}
	return "Fetch " + clip.String(strings.TrimSpace(in.URL), 80, "…")
}

// WebFetch is the web_fetch tool. Its addresses are checked in tools/web; the permission it asks
// is about where the URL sends what it carries.
var WebFetch Tool = &typed[webFetchIn]{spec: Spec{Name: "web_fetch", Effect: EffectFetch, Kind: "fetch", Title: "Fetch a web page", Needs: []Need{NeedWeb}}, run: webFetch}

func webFetch(ctx context.Context, env *Env, in webFetchIn) Result {
	raw := strings.TrimSpace(in.URL)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Errorf("field url: %q is not an http or https URL", clip.String(raw, 200, "…"))
	}
	f := env.Fetcher
	if f == nil {
		f = &web.Fetcher{}
	}
	// A URL that will be refused is refused before the user is asked about it.
	if err := f.CheckURL(raw); err != nil {
		return Errorf("refused %s: %v", clip.String(raw, 200, "…"), err)
	}
	written := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	// The user is asked about the host the request goes to, in the ASCII form the HTTP client
	// dials: a look-alike written in other scripts ("аpple.com", Cyrillic а) is shown as the
	// different host it is ("xn--pple-43d.com"), and a grant names that host only.
	host, err := idna.Lookup.ToASCII(written)
	if err != nil {
		return Errorf("field url: host %q is not a valid domain name: %v", clip.String(written, 200, "…"), err)
	}
	title := "Fetch " + clip.String(raw, 200, "…")
	if host != written {
		title += " (host " + host + ")"
	}
	if err := env.Permit(ctx, PermissionRequest{Title: title, Kind: "fetch", Host: host}); err != nil {
		return Errorf("%v", err)
	}
	page, err := f.Fetch(ctx, raw)
	if err != nil {
		if ctx.Err() != nil {
			return Errorf("cancelled")
		}
		return Errorf("could not fetch %s: %v", clip.String(raw, 200, "…"), err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", page.URL)
	if page.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", page.Title)
	}
	if page.Truncated {
		b.WriteString("The page was longer than the limit; what follows is its beginning.\n")
	}
	// The page is quoted, never mixed with agentd's own words: a closing tag in it is defused.
	b.WriteString("<web_page>\n")
	b.WriteString(strings.ReplaceAll(page.Text, "</web_page", "<\\/web_page"))
	b.WriteString("\n</web_page>\n")
	return Result{Output: b.String(), Raw: map[string]any{"url": page.URL, "status": page.Status, "contentType": page.ContentType, "truncated": page.Truncated}}
}
