package docent_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/docent-hq/docent"
)

func TestScopeRestrict(t *testing.T) {
	public := docent.Scope{Sources: []string{"public"}}
	tagged := docent.Scope{Labels: []string{"faq", "howto"}}
	for _, tc := range []struct {
		name        string
		scope       docent.Scope
		filter      docent.Filter
		wantSources []string
		wantLabels  []string
		wantErr     bool
	}{
		{name: "no scope keeps the filter", filter: docent.Filter{Sources: []string{"a"}}, wantSources: []string{"a"}},
		{name: "scope fills an empty filter", scope: public, wantSources: []string{"public"}},
		{name: "a source inside is kept", scope: docent.Scope{Sources: []string{"a", "b"}},
			filter: docent.Filter{Sources: []string{"b"}}, wantSources: []string{"b"}},
		{name: "a source outside is refused", scope: public, filter: docent.Filter{Sources: []string{"internal"}}, wantErr: true},
		{name: "labels fill an empty filter", scope: tagged, wantLabels: []string{"faq", "howto"}},
		{name: "a label inside is kept", scope: tagged, filter: docent.Filter{Labels: []string{"faq"}}, wantLabels: []string{"faq"}},
		{name: "a label outside is refused", scope: tagged, filter: docent.Filter{Labels: []string{"faq", "secret"}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.scope.Restrict(tc.filter)
			if tc.wantErr {
				if !errors.Is(err, docent.ErrOutOfScope) {
					t.Fatalf("Restrict = %+v, %v; want ErrOutOfScope", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Sources, tc.wantSources) || !slices.Equal(got.Labels, tc.wantLabels) {
				t.Errorf("Restrict = sources %v labels %v, want %v %v", got.Sources, got.Labels, tc.wantSources, tc.wantLabels)
			}
		})
	}
}

// TestScopeRestrictMatchesAllows: a chunk that passes the restricted
// filter is one the scope allows, for every filter Restrict accepts.
func TestScopeRestrictMatchesAllows(t *testing.T) {
	scope := docent.Scope{Sources: []string{"a", "b"}, Labels: []string{"x", "y"}}
	var chunks []docent.Chunk
	for _, src := range []string{"a", "b", "c"} {
		for _, labels := range [][]string{nil, {"x"}, {"y"}, {"z"}, {"x", "z"}} {
			chunks = append(chunks, docent.Chunk{Source: src, Labels: labels})
		}
	}
	filters := []docent.Filter{{}, {Sources: []string{"a"}}, {Labels: []string{"y"}}, {Sources: []string{"b"}, Labels: []string{"x"}}}
	for _, f := range filters {
		r, err := scope.Restrict(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			if r.Match(c) && !scope.Allows(c.Source, c.Labels) {
				t.Errorf("filter %+v restricted to %+v passes %+v, which the scope does not allow", f, r, c)
			}
			if f.IsZero() && r.Match(c) != scope.Allows(c.Source, c.Labels) {
				t.Errorf("the scope's own filter and Allows disagree on %+v", c)
			}
		}
	}
}

func TestCallerContext(t *testing.T) {
	if _, ok := docent.CallerFromContext(context.Background()); ok {
		t.Fatal("a bare context has a caller")
	}
	c := docent.Caller{Name: "community-bot", TokenID: 7, Scope: docent.Scope{Sources: []string{"public"}}}
	got, ok := docent.CallerFromContext(docent.NewContextWithCaller(context.Background(), c))
	if !ok || got.Name != c.Name || got.TokenID != 7 || !slices.Equal(got.Scope.Sources, c.Scope.Sources) {
		t.Fatalf("caller = %+v, %v", got, ok)
	}
}
