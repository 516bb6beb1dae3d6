package providers

import (
	"context"
	"strings"
)

// Embedder turns texts into vectors with an embedding model; a dialect that has an embeddings
// endpoint implements it (OpenAI-style /embeddings, Gemini's batchEmbedContents). It batches as
// its server requires and returns one vector per text, in the order of texts, whatever order the
// server answered in; its failures are *Error like a stream's, retried like a chat request.
type Embedder interface {
	Embed(ctx context.Context, model string, texts []string) ([][]float32, error)
}

// IsEmbeddingModel tells an embedding model from a chat model by its name, for a model list
// that does not say (OpenAI's /models, Ollama's, LM Studio's): every known family of embedding
// models names itself so (text-embedding-3-small, nomic-embed-text, mxbai-embed-large,
// gemini-embedding-001, bge-m3, all-minilm, snowflake-arctic-embed, e5-large, gte-base).
func IsEmbeddingModel(name string) bool {
	n := strings.ToLower(name)
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	if strings.Contains(n, "embed") {
		return true
	}
	for _, p := range []string{"bge-", "bge_", "all-minilm", "e5-", "multilingual-e5", "gte-", "jina-colbert", "paraphrase-"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}
