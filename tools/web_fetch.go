package tools

import (
	"context"
	"errors"
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
	host, written, err := fetchHost(u)
	if err != nil {
		return Errorf("field url: host %q is not a valid domain name: %v", clip.String(written, 200, "…"), err)
	}
	if err := env.Permit(ctx, fetchQuestion(raw, host, written, "")); err != nil {
		return Errorf("%v", err)
	}
	// Each host the fetch reaches is one the user allowed (or a grant covers): a redirect to
	// another host stops the fetch before anything is sent there, is asked about like the
	// first URL, and only then fetched. Otherwise an open redirect on an allowed site would carry
	// the model's URL, and whatever it holds, anywhere.
	allowed := map[string]bool{host: true}
	follow := func(to *url.URL) bool {
		h, _, err := fetchHost(to)
		return err == nil && allowed[h]
	}
	target := raw
	var page *web.Page
	for hops := 0; ; hops++ {
		page, err = f.FetchFollowing(ctx, target, follow)
		var re *web.RedirectError
		if err == nil || !errors.As(err, &re) {
			break
		}
		if hops >= web.DefaultMaxRedirects {
			return Errorf("could not fetch %s: more than %d redirects to other hosts", clip.String(raw, 200, "…"), web.DefaultMaxRedirects)
		}
		next := re.To.String()
		h, w, herr := fetchHost(re.To)
		if herr != nil {
			return Errorf("could not fetch %s: it redirected to %s, whose host %q is not a valid domain name", clip.String(raw, 200, "…"), clip.String(next, 200, "…"), clip.String(w, 200, "…"))
		}
		if perr := env.Permit(ctx, fetchQuestion(next, h, w, re.From.String())); perr != nil {
			return Errorf("%s redirected to %s, which was not fetched: %v", clip.String(re.From.String(), 200, "…"), clip.String(next, 200, "…"), perr)
		}
		allowed[h] = true
		target = next
	}
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

// fetchHost is the host a request to u goes to, as the user is asked about it and as a grant
// names it: in the ASCII form the HTTP client dials, so a look-alike written in other scripts
// ("аpple.com", Cyrillic а) is the different host it is ("xn--pple-43d.com"). written is the
// host as the URL wrote it (lowercase, without a final dot).
func fetchHost(u *url.URL) (host, written string, err error) {
	written = strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	host, err = idna.Lookup.ToASCII(written)
	return host, written, err
}

// fetchQuestion is the permission question for fetching raw from host; from is the URL that
// redirected there, if any.
func fetchQuestion(raw, host, written, from string) PermissionRequest {
	title := "Fetch " + clip.String(raw, 200, "…")
	if host != written {
		title += " (host " + host + ")"
	}
	if from != "" {
		title += " (redirected from " + clip.String(from, 200, "…") + ")"
	}
	return PermissionRequest{Title: title, Kind: "fetch", Host: host}
}
