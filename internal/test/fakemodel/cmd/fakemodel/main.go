// Command fakemodel serves a scripted OpenAI-compatible chat-completions
// endpoint on loopback for end-to-end tests of agentd and its editor clients.
//
//	fakemodel --script FILE [--addr 127.0.0.1:0] [--log FILE] [--headers FILE]
//
// When ready it prints exactly one line, the base URL (for example
// "http://127.0.0.1:41234/v1"), on stdout. It serves until it is killed or,
// when stdin is a pipe, until stdin closes, so a parent that dies takes it
// along. Every chat request body is appended to --log as one JSON line, and
// every request's method, path and credential headers (Authorization,
// x-api-key, x-goog-api-key, "" when absent) to --headers, so a client's test
// can check which key, if any, reached this server.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/agentd-dev/agentd/internal/test/fakemodel"
)

func main() {
	scriptPath := flag.String("script", "", "script JSON file (required)")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	logPath := flag.String("log", "", "append each chat request body to this file as one JSON line")
	headersPath := flag.String("headers", "", "append each request's method, path and credential headers to this file as one JSON line")
	flag.Parse()
	if err := run(*scriptPath, *addr, *logPath, *headersPath); err != nil {
		fmt.Fprintln(os.Stderr, "fakemodel:", err)
		os.Exit(1)
	}
}

func run(scriptPath, addr, logPath, headersPath string) error {
	if scriptPath == "" {
		return fmt.Errorf("--script is required")
	}
	data, err := os.ReadFile(scriptPath)
	if err != nil {
		return err
	}
	script, err := fakemodel.ParseScript(data)
	if err != nil {
		return err
	}
	srv := fakemodel.New(script)
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		var mu sync.Mutex
		srv.OnRequest(func(body []byte) {
			mu.Lock()
			defer mu.Unlock()
			f.Write(append(oneLine(body), '\n'))
		})
	}
	var url string
	if headersPath == "" {
		url, err = srv.Start(addr)
		if err != nil {
			return err
		}
		defer srv.Close()
	} else {
		f, err := os.OpenFile(headersPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: recordHeaders(f, srv.Handler())}
		go hs.Serve(ln)
		defer hs.Close()
		url = "http://" + ln.Addr().String() + "/v1"
	}
	fmt.Println(url)

	done := make(chan struct{})
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 {
		go func() {
			io.Copy(io.Discard, os.Stdin)
			close(done)
		}()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	return nil
}

// oneLine compacts a JSON body onto one line; a body that is not JSON is
// logged as a JSON string so that the log stays one JSON value a line.
func oneLine(body []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, body) == nil {
		return buf.Bytes()
	}
	b, _ := json.Marshal(string(body))
	return b
}

// recordHeaders appends each request's method, path and credential headers to w, one JSON line
// each, before next answers it.
func recordHeaders(w io.Writer, next http.Handler) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		line, _ := json.Marshal(map[string]string{
			"method":         r.Method,
			"path":           r.URL.Path,
			"authorization":  r.Header.Get("Authorization"),
			"x-api-key":      r.Header.Get("X-Api-Key"),
			"x-goog-api-key": r.Header.Get("X-Goog-Api-Key"),
		})
		mu.Lock()
		w.Write(append(line, '\n'))
		mu.Unlock()
		next.ServeHTTP(rw, r)
	})
}
