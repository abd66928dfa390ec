package connectorstest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/docent-hq/docent"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/connectorstest"
)

// memBackend drives the in-memory Source through the suite.
type memBackend struct{ src *connectorstest.Source }

var _ connectorstest.Unreadable = memBackend{}

func (b memBackend) Source() connectors.Source { return b.src }

func (b memBackend) ID(key string) string { return b.src.Name() + ":" + key }

func (b memBackend) doc(key, markdown string) docent.Document {
	d := connectorstest.Doc(b.src.Name(), key, markdown)
	d.Title, _, _ = strings.Cut(strings.TrimPrefix(markdown, "# "), "\n")
	return d
}

func (b memBackend) Apply(t testing.TB, c connectorstest.Change) {
	docs := b.src.Docs()
	for from, to := range c.Rename {
		i := slices.IndexFunc(docs, func(d docent.Document) bool { return d.ID == b.ID(from) })
		if i < 0 {
			t.Fatalf("rename %s: no such document", from)
		}
		b.src.Delete(b.ID(from))
		b.src.Put(b.doc(to, docs[i].Body))
	}
	for _, key := range c.Remove {
		b.src.Delete(b.ID(key))
	}
	for key, md := range c.Write {
		b.src.Put(b.doc(key, md))
	}
	for _, key := range c.Break {
		b.src.Fail(b.ID(key), fmt.Errorf("%w: %s", connectors.ErrBinary, key))
	}
}

func (b memBackend) SetUnreadable(t testing.TB, key string, on bool) {
	var err error
	if on {
		err = fmt.Errorf("fetch %s: %w", key, context.DeadlineExceeded)
	}
	b.src.Unreadable(b.ID(key), err)
}

// TestSourceSuite runs the contract suite over the in-memory Source in its
// three listing modes, which between them exercise every capability.
func TestSourceSuite(t *testing.T) {
	for _, tt := range []struct {
		name             string
		incremental, ids bool
		caps             connectorstest.Capabilities
	}{
		{"full", false, false, connectorstest.Capabilities{ListsAllIDs: true, TransientFailures: true}},
		{"incremental", true, false, connectorstest.Capabilities{Incremental: true, TransientFailures: true}},
		{"id listing", true, true, connectorstest.Capabilities{Incremental: true, ListsAllIDs: true, TransientFailures: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			connectorstest.RunSourceSuite(t, connectorstest.Harness{
				New: func(t *testing.T, name string) connectorstest.Backend {
					src := connectorstest.NewSource(name)
					src.SetIncremental(tt.incremental)
					src.SetIDListing(tt.ids)
					return memBackend{src}
				},
				Capabilities: tt.caps,
			})
		})
	}
}
