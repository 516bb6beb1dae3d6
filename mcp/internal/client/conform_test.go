package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// The official SDK's server is the reference this client is checked against, over both
// transports: the handshake, paged listings, every content kind, prompts, list_changed, and a
// cancelled call reaching the server's handler.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sdkServer is a server with five tools (two pages of two, then one), one of which hangs until
// cancelled and reports it on cancelled, and a prompt.
func sdkServer(started, cancelled chan<- struct{}) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "ref", Version: "1"}, &sdk.ServerOptions{PageSize: 2})
	obj := map[string]any{"type": "object"}
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "echoes", InputSchema: obj}, func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return text("echo " + string(r.Params.Arguments)), nil
	})
	s.AddTool(&sdk.Tool{Name: "kinds", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "t"},
			&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG")},
			&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			&sdk.ResourceLink{URI: "file:///l", Name: "l"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///e", MIMEType: "text/plain", Text: "embedded"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}},
		}, StructuredContent: map[string]any{"k": "v"}}, nil
	})
	s.AddTool(&sdk.Tool{Name: "throws", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, errors.New("boom")
	})
	s.AddTool(&sdk.Tool{Name: "hangs", InputSchema: obj}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return nil, ctx.Err()
	})
	s.AddTool(&sdk.Tool{Name: "zz", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("z"), nil })
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "says hello", Arguments: []*sdk.PromptArgument{{Name: "who"}}},
		func(_ context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello " + r.Params.Arguments["who"]}}}}, nil
		})
	return s
}

// overStdio runs srv on one end of two pipes and returns the transport for the other.
func overStdio(t *testing.T, srv *sdk.Server) Transport {
	c2s, c2sw := io.Pipe()
	s2c, s2cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Run(ctx, &sdk.IOTransport{Reader: c2s, Writer: s2cw})
	}()
	t.Cleanup(func() { cancel(); c2s.Close(); s2cw.Close(); <-done })
	return pipeTransport{r: s2c, w: c2sw}
}

func overHTTP(t *testing.T, srv *sdk.Server) Transport {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &HTTP{Endpoint: ts.URL, MaxRetries: 1}
}

func TestAgainstTheSDKServer(t *testing.T) {
	for _, tr := range []struct {
		name string
		over func(*testing.T, *sdk.Server) Transport
	}{{"stdio", overStdio}, {"http", overHTTP}} {
		t.Run(tr.name, func(t *testing.T) {
			started, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
			srv := sdkServer(started, cancelled)
			changed := make(chan bool, 4)
			s, err := Connect(context.Background(), tr.over(t, srv), Options{Info: Info{Name: "agentd", Version: "1"},
				ToolsChanged: func() { changed <- true }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			if v := s.InitializeResult().ProtocolVersion; v != "2025-11-25" {
				t.Errorf("negotiated %q", v)
			}
			tl, err := s.Tools(ctx, 1000)
			var names []string
			for _, x := range tl {
				names = append(names, x.Name)
			}
			if err != nil || strings.Join(names, ",") != "echo,hangs,kinds,throws,zz" {
				t.Fatalf("tools over pages of 2 = %v, %v", names, err)
			}
			if string(tl[0].InputSchema) != `{"type":"object"}` || tl[0].Description != "echoes" {
				t.Errorf("echo = %+v", tl[0])
			}
			if r, err := s.CallTool(ctx, "echo", map[string]any{"x": 1}); err != nil || r.Content[0].Text != `echo {"x":1}` {
				t.Errorf("echo = %+v, %v", r, err)
			}
			r, err := s.CallTool(ctx, "kinds", nil)
			if err != nil {
				t.Fatal(err)
			}
			c := r.Content
			if len(c) != 6 || c[0].Text != "t" || c[1].Type != KindImage || string(c[1].Data) != "\x89PNG" || c[2].Type != KindAudio ||
				string(c[2].Data) != "RIFF" || c[3].Type != KindResourceLink || c[3].URI != "file:///l" || c[4].Resource.Text != "embedded" ||
				string(c[5].Resource.Blob) != "\x00\x01\x02" || r.StructuredContent.(map[string]any)["k"] != "v" {
				t.Errorf("kinds = %+v", r)
			}
			// The SDK's server answers a handler's error (AddTool's low-level form) with a JSON-RPC error.
			if r, err := s.CallTool(ctx, "throws", nil); err == nil || !strings.Contains(err.Error(), "boom") {
				t.Errorf("throws = %+v, %v", r, err)
			}
			pl, err := s.Prompts(ctx, 1000)
			if err != nil || len(pl) != 1 || pl[0].Arguments[0].Name != "who" {
				t.Fatalf("prompts = %+v, %v", pl, err)
			}
			if g, err := s.GetPrompt(ctx, "greet", map[string]string{"who": "you"}); err != nil || g.Messages[0].Content.Text != "hello you" {
				t.Errorf("greet = %+v, %v", g, err)
			}

			cctx, cancel := context.WithCancel(ctx)
			call := async(func() (*CallToolResult, error) { return s.CallTool(cctx, "hangs", nil) })
			<-started
			cancel()
			if _, err := call(); !errors.Is(err, context.Canceled) {
				t.Errorf("the cancelled call = %v", err)
			}
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Error("the server's handler never saw the cancel")
			}

			srv.AddTool(&sdk.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{}, nil
			})
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("list_changed never arrived")
			}
			if tl, err := s.Tools(ctx, 1000); err != nil || len(tl) != 6 {
				t.Errorf("after list_changed: %d tools, %v", len(tl), err)
			}
		})
	}
}
