package providers

import "context"

// Batches of an embeddings request: no server takes a whole project at once. OpenAI allows 2048
// inputs and 300k tokens a request, Gemini 100 requests a batch; these bounds stay well inside
// both and inside what local servers (Ollama, llama-server) answer quickly.
const (
	EmbedBatchTexts = 64
	EmbedBatchBytes = 256 << 10
)

// EmbedBatches calls one(batch) for consecutive batches of texts (at most EmbedBatchTexts texts
// and, unless one text alone is larger, EmbedBatchBytes bytes each) and puts the vectors of each
// batch where its texts were. one must return exactly one vector per text of its batch, in order.
func EmbedBatches(ctx context.Context, texts []string, one func(ctx context.Context, batch []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); {
		end, size := start, 0
		for end < len(texts) && end-start < EmbedBatchTexts && (end == start || size+len(texts[end]) <= EmbedBatchBytes) {
			size += len(texts[end])
			end++
		}
		vs, err := one(ctx, texts[start:end])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
		start = end
	}
	return out, nil
}
