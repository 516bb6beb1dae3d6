package fakemodel

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strings"
)

// EmbeddingDim is the size of the fake embeddings.
const EmbeddingDim = 256

// Embed is the fake embedding of one text: each word of four letters or more adds 1 to a bucket
// of its hash, so texts that share words point the same way. Deterministic, and enough for a
// search test to find the file that talks about what the query asks.
func Embed(text string) []float32 {
	v := make([]float32, EmbeddingDim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		if len(w) < 4 {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%EmbeddingDim]++
	}
	return v
}

// embeddings answers POST /v1/embeddings in OpenAI's shape, listing the vectors in reverse
// order (each with its index), as a server may: the client must put them back in order. It does
// not use up a turn of the script.
func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	body, err := readAll(w, r)
	if err != nil {
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Model == "" || len(req.Input) == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"model and input (an array of strings) are required","type":"invalid_request_error"}}`)
		return
	}
	s.mu.Lock()
	s.embedInputs += len(req.Input)
	s.mu.Unlock()
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, 0, len(req.Input))
	for i := len(req.Input) - 1; i >= 0; i-- {
		data = append(data, item{Object: "embedding", Index: i, Embedding: Embed(req.Input[i])})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "model": req.Model, "data": data})
}

// EmbeddedTexts is how many texts /v1/embeddings has embedded so far.
func (s *Server) EmbeddedTexts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedInputs
}
