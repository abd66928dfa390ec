package typesense_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/searchtest"
	"github.com/docent-hq/docent/search/typesense"
	"github.com/docent-hq/docent/search/typesense/typesensetest"
)

// MustCluster starts an in-repo cluster of n nodes, closed with the test.
func MustCluster(tb testing.TB, n int) *typesensetest.Cluster {
	tb.Helper()
	c, err := typesensetest.New(n, typesensetest.Options{})
	if err != nil {
		tb.Fatalf("typesensetest.New: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// MustOpen opens an index over the cluster under alias.
func MustOpen(tb testing.TB, c *typesensetest.Cluster, alias string, mod ...func(*typesense.Options)) *typesense.Index {
	tb.Helper()
	opts := typesense.Options{Nodes: c.URLs(), APIKey: c.APIKey(), Alias: alias}
	for _, m := range mod {
		m(&opts)
	}
	ix, err := typesense.Open(context.Background(), opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { ix.Close() })
	return ix
}

// caps are what the Typesense backend promises: stemming (stem: true
// fields) and the 10,000-chunk batch; not exact tie order (Typesense
// breaks text-match ties by its own rules) nor FTS5 syntax.
var caps = searchtest.Capabilities{Stemming: true, LargeBatch: 10000}

// TestIndexSuite runs the shared contract suite through the in-repo
// cluster, and checks that the backend sent no request the server (or the
// official API spec) refuses.
func TestIndexSuite(t *testing.T) {
	c := MustCluster(t, 3)
	if !c.SpecChecked() {
		t.Log("official OpenAPI spec not found: requests are checked by the test server only")
	}
	searchtest.RunIndexSuite(t, func(t *testing.T, name string) search.Index {
		return MustOpen(t, c, alias(name))
	}, caps)
	if v := c.Violations(); len(v) > 0 {
		t.Errorf("the backend sent %d request(s) the server refused:\n%s", len(v), strings.Join(v, "\n"))
	}
}

// TestRealIndexSuite runs the suite against a real Typesense:
//
//	TYPESENSE_URL=http://localhost:8108 TYPESENSE_API_KEY=xyz go test ./search/typesense/ -run Real
func TestRealIndexSuite(t *testing.T) {
	url := os.Getenv("TYPESENSE_URL")
	if url == "" {
		t.Skip("TYPESENSE_URL not set: no real Typesense to run against")
	}
	var opened []*typesense.Index
	searchtest.RunIndexSuite(t, func(t *testing.T, name string) search.Index {
		ix, err := typesense.Open(context.Background(), typesense.Options{
			Nodes: strings.Split(url, ","), APIKey: os.Getenv("TYPESENSE_API_KEY"), Alias: "docenttest_" + alias(name),
		})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		opened = append(opened, ix)
		return ix
	}, caps)
	for _, ix := range opened {
		if err := ix.Drop(context.Background()); err != nil {
			t.Errorf("Drop %s: %v", ix.Alias(), err)
		}
	}
}

func alias(name string) string {
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, strings.ToLower(name))
	if len(name) > 60 {
		name = name[:60]
	}
	return name
}
