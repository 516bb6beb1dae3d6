package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentd-dev/agentd/workspace"
)

// TestNoRequestCarriesAnotherSessionsContent: two sessions of one daemon, on two projects whose
// instructions (in the system prompt) and files (in tool results) hold a secret each, run the
// task at once through one provider, as the daemon's registry shares one provider per resolved
// configuration. Whatever the dialects keep between requests to save bytes (the encoded tools,
// Gemini's cachedContents by payload) must never put one session's content in the other's
// request: every body holds exactly one of the secrets, and a Gemini request names only a
// cache made from its own session's payload.
func TestNoRequestCarriesAnotherSessionsContent(t *testing.T) {
	secrets := map[string]string{"alpha": "secret-ALPHA-7f3e19", "bravo": "secret-BRAVO-91c2d4"}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			dirs := map[string]string{}
			// A body is a session's when it holds its secret or its directory (the live
			// context names it), and no other session's.
			route := func(body []byte) (string, error) {
				var whose []string
				for k, s := range secrets {
					if bytes.Contains(body, []byte(s)) || bytes.Contains(body, []byte(dirs[k])) {
						whose = append(whose, k)
					}
				}
				if len(whose) != 1 {
					return "", errors.New("a request holds the secrets of " + jsonList(whose) + ": " + string(body[:min(len(body), 300)]))
				}
				return whose[0], nil
			}
			srv := newRoutedServer(t, d, rename.script, route)
			prov, cfg := d.provider(t, srv.URL())
			wss := map[string]*editorWS{}
			for k, secret := range secrets {
				dir := t.TempDir()
				writeProject(t, dir)
				if err := os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("This project is "+k+"; its release key is "+secret+".\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
				if err := os.WriteFile(filepath.Join(dir, "README.md"), append(readme, "\nMaintained under "+secret+".\n"...), 0o644); err != nil {
					t.Fatal(err)
				}
				real, err := filepath.EvalSymlinks(dir)
				if err != nil {
					t.Fatal(err)
				}
				dirs[k] = real
				wss[real] = &editorWS{Disk: workspace.NewDisk(real), dir: real, step: srv.counter(k)}
			}
			m := newManager(t, source{prov, cfg}, func(_ string, r *workspace.Roots) workspace.Workspace { return wss[r.Cwd()] })
			var wg sync.WaitGroup
			errs := make(chan error, len(dirs))
			for _, dir := range dirs {
				wg.Go(func() { errs <- play(m, dir, rename) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			made := map[string]string{} // a cachedContents name → whose payload
			for _, r := range srv.recorded() {
				if r.name != "" {
					made[r.name] = r.route
				}
			}
			for _, r := range srv.recorded() {
				if r.step == 0 {
					continue
				}
				var g struct {
					CachedContent string `json:"cachedContent"`
				}
				if json.Unmarshal(r.body, &g) == nil && g.CachedContent != "" && made[g.CachedContent] != r.route {
					t.Errorf("step %d of %s names the cache %s, made for %q", r.step, r.route, g.CachedContent, made[g.CachedContent])
				}
			}
			for k := range secrets {
				if n := int(srv.counter(k).Load()); n != len(rename.script) {
					t.Errorf("session %s made %d model requests, want %d", k, n, len(rename.script))
				}
			}
			if d.name == "gemini" && len(made) != 2 {
				t.Errorf("%d cachedContents made, want one per session: %v", len(made), made)
			}
		})
	}
}

func jsonList(xs []string) string {
	b, _ := json.Marshal(xs)
	return string(b)
}
