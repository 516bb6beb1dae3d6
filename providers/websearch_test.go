package providers

import "testing"

func TestAddSourceKeepsEachURLOnce(t *testing.T) {
	var r WebSearchResult
	r.AddSource("A", "https://a.example/")
	r.AddSource("again", " https://a.example/ ")
	r.AddSource("none", "")
	r.AddSource("B", "https://b.example/")
	if len(r.Sources) != 2 || r.Sources[0].Title != "A" || r.Sources[1].URL != "https://b.example/" {
		t.Fatalf("%+v", r.Sources)
	}
}
