package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

var _ providers.Embedder = (*Provider)(nil)

type embedContent struct {
	Parts []textPart `json:"parts"`
}

type textPart struct {
	Text string `json:"text"`
}

type embedRequest struct {
	Model   string       `json:"model"`
	Content embedContent `json:"content"`
}

// Embed implements providers.Embedder with POST /v1beta/models/{model}:batchEmbedContents, in
// batches, with the chat requests' key header and retries. The answer lists the embeddings in the
// order of the requests.
func (p *Provider) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	model = strings.TrimPrefix(strings.TrimSpace(model), "models/")
	if model == "" {
		return nil, &providers.Error{Kind: providers.ErrInvalidRequest, Message: "No Gemini embedding model is configured; set the provider's embeddingModel."}
	}
	return providers.EmbedBatches(ctx, texts, func(ctx context.Context, batch []string) ([][]float32, error) {
		reqs := make([]embedRequest, len(batch))
		for i, t := range batch {
			reqs[i] = embedRequest{Model: "models/" + model, Content: embedContent{Parts: []textPart{{Text: t}}}}
		}
		body, err := json.Marshal(map[string]any{"requests": reqs})
		if err != nil {
			return nil, &providers.Error{Kind: providers.ErrInvalidRequest, Message: "agentd could not encode the embeddings request: " + err.Error()}
		}
		b, perr := p.tr.Fetch(ctx, &httpsse.Call{Provider: name, URL: p.base + "/v1beta/models/" + url.PathEscape(model) + ":batchEmbedContents", Header: p.header(), Body: body})
		if perr != nil {
			return nil, perr
		}
		var resp struct {
			Embeddings []struct {
				Values []float32 `json:"values"`
			} `json:"embeddings"`
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			return nil, providers.ProtocolError(name, "batchEmbedContents: "+err.Error())
		}
		if len(resp.Embeddings) != len(batch) {
			return nil, providers.ProtocolError(name, fmt.Sprintf("batchEmbedContents: %d embeddings for %d texts", len(resp.Embeddings), len(batch)))
		}
		out := make([][]float32, len(batch))
		for i, e := range resp.Embeddings {
			if len(e.Values) == 0 || len(e.Values) != len(resp.Embeddings[0].Values) {
				return nil, providers.ProtocolError(name, "batchEmbedContents: an empty embedding or embeddings of different sizes")
			}
			out[i] = e.Values
		}
		return out, nil
	})
}
