package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentd-dev/agentd/providers"
	"github.com/agentd-dev/agentd/providers/httpsse"
)

var _ providers.Embedder = (*Provider)(nil)

type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
	// Dimensions shortens the vectors of a model trained to allow it (embedDimensions).
	Dimensions int `json:"dimensions,omitempty"`
}

// embedDimensions is the vector size agentd asks of OpenAI's text-embedding-3 models, whose
// vectors may be shortened (their API's `dimensions`; the first dimensions carry the most): 768
// instead of 1536 or 3072 keeps a 100k-chunk query inside 20 ms on two cores (27 ms at 1536,
// docs/benchmarks.md) and halves the index on disk, at a small cost in recall. Other models get
// their own size; no other server is sent the parameter.
func embedDimensions(model string) int {
	if strings.HasPrefix(model, "text-embedding-3-") {
		return 768
	}
	return 0
}

type embedResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed implements providers.Embedder with POST {baseUrl}/embeddings, in batches, with the chat
// requests' key (bound to this provider's origin), classification and retries. The server may
// answer a batch in any order: each vector goes back where its index says.
func (p *Provider) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	model = strings.TrimSpace(model)
	if model == "" {
		return nil, &providers.Error{Kind: providers.ErrInvalidRequest, Message: "No embedding model is set for " + p.who + "; set the provider's embeddingModel."}
	}
	if e := p.keyMissing(); e != nil {
		return nil, e
	}
	return providers.EmbedBatches(ctx, texts, func(ctx context.Context, batch []string) ([][]float32, error) {
		body, err := json.Marshal(embedRequest{Model: model, Input: batch, Dimensions: embedDimensions(model)})
		if err != nil {
			return nil, &providers.Error{Kind: providers.ErrInvalidRequest, Message: "agentd could not encode the embeddings request: " + err.Error()}
		}
		b, perr := p.tr.Fetch(ctx, &httpsse.Call{Provider: p.who, URL: p.base + "/embeddings", Header: p.header(false), Body: body, Classify: p.classify})
		if perr != nil {
			return nil, perr
		}
		return decodeEmbeddings(p.who, b, len(batch))
	})
}

// decodeEmbeddings puts the vectors of one answer in input order and checks that every input got
// exactly one, all of one dimension.
func decodeEmbeddings(who string, body []byte, n int) ([][]float32, error) {
	var resp embedResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, providers.ProtocolError(who, "embeddings: "+err.Error())
	}
	if len(resp.Data) != n {
		return nil, providers.ProtocolError(who, fmt.Sprintf("embeddings: %d vectors for %d inputs", len(resp.Data), n))
	}
	out := make([][]float32, n)
	for i, d := range resp.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || out[idx] != nil {
			return nil, providers.ProtocolError(who, fmt.Sprintf("embeddings: index %d is out of range or repeated", idx))
		}
		if len(d.Embedding) == 0 || len(d.Embedding) != len(resp.Data[0].Embedding) {
			return nil, providers.ProtocolError(who, "embeddings: an empty vector or vectors of different sizes")
		}
		out[idx] = d.Embedding
	}
	return out, nil
}
