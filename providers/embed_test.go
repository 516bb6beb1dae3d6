package providers

import (
	"context"
	"testing"
)

func TestIsEmbeddingModel(t *testing.T) {
	for name, want := range map[string]bool{
		"text-embedding-3-small": true, "text-embedding-ada-002": true, "nomic-embed-text:latest": true,
		"mxbai-embed-large": true, "gemini-embedding-001": true, "text-embedding-004": true, "bge-m3": true,
		"all-minilm:l6-v2": true, "snowflake-arctic-embed2": true, "intfloat/multilingual-e5-large": true,
		"gpt-5": false, "gpt-4o-search-preview": false, "qwen2.5-coder:7b": false, "claude-sonnet-4-5": false,
		"gemini-2.5-flash": false, "llama3.1:8b": false, "deepseek-coder-v2": false,
	} {
		if got := IsEmbeddingModel(name); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
}

func TestEmbedBatchesKeepOrderAndBounds(t *testing.T) {
	big := string(make([]byte, EmbedBatchBytes))
	texts := []string{"a", big, "b", "c"}
	var sizes []int
	vs, err := EmbedBatches(t.Context(), texts, func(_ context.Context, batch []string) ([][]float32, error) {
		sizes = append(sizes, len(batch))
		out := make([][]float32, len(batch))
		for i, s := range batch {
			out[i] = []float32{float32(len(s))}
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 3 || sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 2 {
		t.Fatalf("batch sizes %v", sizes)
	}
	for i, s := range texts {
		if int(vs[i][0]) != len(s) {
			t.Fatalf("vector %d out of order", i)
		}
	}
}
