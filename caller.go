package docent

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ErrOutOfScope is returned when a request names a source or label its
// caller's scope does not include, or asks for a document outside it.
var ErrOutOfScope = errors.New("outside the caller's scope")

// Scope limits the documents a caller may read: those of the listed
// sources that carry at least one of the listed labels. Zero fields do not
// restrict. An API token's scope is applied inside retrieval (as a
// Filter) and to every document lookup, so a scoped caller never receives
// a passage, answer or document from outside it.
type Scope struct {
	// Sources are the source names the caller may read; empty means all.
	Sources []string `json:"sources,omitempty"`
	// Labels are the labels of which a document must carry one; empty
	// means any document.
	Labels []string `json:"labels,omitempty"`
}

// IsZero reports whether the scope restricts nothing.
func (s Scope) IsZero() bool { return len(s.Sources) == 0 && len(s.Labels) == 0 }

// Allows reports whether a document of source carrying labels is inside
// the scope.
func (s Scope) Allows(source string, labels []string) bool {
	if len(s.Sources) > 0 && !slices.Contains(s.Sources, source) {
		return false
	}
	if len(s.Labels) > 0 && !slices.ContainsFunc(labels, func(l string) bool { return slices.Contains(s.Labels, l) }) {
		return false
	}
	return true
}

// Restrict narrows f to the scope. A filter without sources (labels) gets
// the scope's; a filter that names some must name only sources (labels)
// inside the scope, or Restrict returns an error wrapping ErrOutOfScope
// that names the first one outside. Since every label the narrowed filter
// keeps is one of the scope's, a chunk that passes it is inside the scope.
func (s Scope) Restrict(f Filter) (Filter, error) {
	var err error
	if f.Sources, err = within("source", f.Sources, s.Sources); err != nil {
		return f, err
	}
	if f.Labels, err = within("label", f.Labels, s.Labels); err != nil {
		return f, err
	}
	return f, nil
}

// within returns asked, or allowed when nothing was asked; an asked value
// outside a non-empty allowed list is an error.
func within(what string, asked, allowed []string) ([]string, error) {
	if len(allowed) == 0 {
		return asked, nil
	}
	if len(asked) == 0 {
		return slices.Clone(allowed), nil
	}
	for _, v := range asked {
		if !slices.Contains(allowed, v) {
			return nil, fmt.Errorf("%s %q is %w (allowed: %v)", what, v, ErrOutOfScope, allowed)
		}
	}
	return asked, nil
}

// Caller is who makes a request through an authenticated entrance (the
// JSON API, MCP over HTTP): an API token.
type Caller struct {
	// Name is the token's name, as the turns it asks record it.
	Name string
	// TokenID identifies the token; its rate budget is kept by ID.
	TokenID int64
	// RatePerMinute bounds the token's requests per minute; 0 means the
	// server's default.
	RatePerMinute int
	// Scope limits what the caller may read.
	Scope Scope
}

type callerKey struct{}

// NewContextWithCaller returns a copy of ctx that carries c.
func NewContextWithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFromContext returns the caller ctx carries, if any: none for an
// anonymous request (the demo on localhost, a local stdio client).
func CallerFromContext(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
