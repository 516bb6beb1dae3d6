package tools

import (
	"fmt"
	"iter"

	"github.com/agentd-dev/agentd/providers"
)

// Registry holds the tools offered to the model, in registration order.
type Registry struct {
	order  []Tool
	byName map[string]Tool
}

// NewRegistry returns a registry holding ts. A duplicate name is a programming error.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range ts {
		r.Register(t)
	}
	return r
}

// Register adds t.
func (r *Registry) Register(t Tool) {
	if _, dup := r.byName[t.Name()]; dup {
		panic(fmt.Sprintf("tools: %q registered twice", t.Name()))
	}
	r.order = append(r.order, t)
	r.byName[t.Name()] = t
}

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// List returns the tools in registration order.
func (r *Registry) List() []Tool { return append([]Tool(nil), r.order...) }

// All yields the tools in registration order without copying the list, for loops that run
// with every model request.
func (r *Registry) All() iter.Seq[Tool] {
	return func(yield func(Tool) bool) {
		for _, t := range r.order {
			if !yield(t) {
				return
			}
		}
	}
}

// Specs returns the tool declarations sent to the model.
func (r *Registry) Specs() []providers.ToolSpec {
	out := make([]providers.ToolSpec, 0, len(r.order))
	for _, t := range r.order {
		out = append(out, providers.ToolSpec{Name: t.Name(), Description: t.Description(), Schema: t.Schema()})
	}
	return out
}
