package oauthtest

import (
	"context"
	"fmt"
	"net/http"
)

// EndsAt plays a browser on another machine than agentd's: it asks the authorization URL and
// returns where the authorization server redirects it (agentd's loopback callback, with the code
// and state), without going there. That is the address a user pastes.
func EndsAt(ctx context.Context, authURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" {
		return "", fmt.Errorf("the authorization endpoint answered HTTP %d without a redirect", resp.StatusCode)
	}
	return loc, nil
}
