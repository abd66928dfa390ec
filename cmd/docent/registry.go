package main

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docent-hq/docent/answer"
	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/connectors"
	"github.com/docent-hq/docent/connectors/files"
	"github.com/docent-hq/docent/connectors/git"
	"github.com/docent-hq/docent/examples/handbook"
	"github.com/docent-hq/docent/llm/offline"
	"github.com/docent-hq/docent/search"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/search/typesense"
	"github.com/docent-hq/docent/store"
)

// The implementations this build can run, per seam, picked by their
// config name. A new source type, index backend or model provider is a
// package and one entry here (plus its config section); config
// validation reports any other name at its key and line.

// impl is one registered implementation: what it is, and its constructor.
type impl[T any] struct {
	// about says what the implementation is, for `docent config`.
	about string
	// open builds it from the wired Main.
	open T
}

// sourceOpener builds a source from its config. It also returns the
// source's file system when the documents live on this machine (served
// under /docs so their citations are clickable).
type sourceOpener func(m *Main, sc config.SourceConfig, dataDir string) (connectors.Source, fs.FS, error)

type backendOpener func(ctx context.Context, m *Main, dataDir string) (search.Index, error)

type embedderOpener func(m *Main, dataDir string) (search.Embedder, error)

// answererOpener returns the answer stages a provider serves (the
// Retriever is wired separately, the same for every provider).
type answererOpener func(m *Main) (answer.Stages, error)

var sourceTypes = map[string]impl[sourceOpener]{
	config.SourceBundled: {"connectors/files over the example handbook embedded in the binary", openBundled},
	config.SourceDir:     {"connectors/files over a local folder", openDir},
	config.SourceGit:     {"connectors/git: a remote or local git repository (go-git)", openGit},
}

var backends = map[string]impl[backendOpener]{
	config.BackendLocal:     {"search/local: SQLite FTS5 BM25 + in-memory vectors in the data dir", openLocal},
	config.BackendTypesense: {"search/typesense: a Typesense cluster, versioned collections behind an alias", openTypesense},
}

var embedders = map[string]impl[embedderOpener]{
	config.ProviderOffline: {"llm/offline: word vectors learned from the indexed corpus (no network)", openOffline},
}

var answerers = map[string]impl[answererOpener]{
	config.ProviderOffline: {"answer: standalone rewrite (docs' spellings, parts), page-order rerank, relevance gate, extractive quotes, citation check", openOfflineAnswerer},
}

// implementations tells config validation what this build can run.
func implementations() config.Implementations {
	return config.Implementations{
		Sources:   slices.Sorted(maps.Keys(sourceTypes)),
		Backends:  slices.Sorted(maps.Keys(backends)),
		Embedders: slices.Sorted(maps.Keys(embedders)),
		Answerers: slices.Sorted(maps.Keys(answerers)),
	}
}

// Seam is the implementation one seam got, as `docent config` shows it.
type Seam struct {
	// Seam is the seam ("index", "embedder", "answerer", "source NAME").
	Seam string
	// Name is the implementation's config name; About says what it is.
	Name, About string
}

// seams returns the implementation each seam gets under cfg.
func seams(cfg config.Config) []Seam {
	out := []Seam{
		{"index", cfg.Index.Backend, backends[cfg.Index.Backend].about},
		{"embedder", cfg.Embedder.Provider, embedders[cfg.Embedder.Provider].about},
		{"answerer", cfg.Answerer.Provider, answerers[cfg.Answerer.Provider].about},
	}
	for _, s := range cfg.Sources {
		out = append(out, Seam{"source " + s.Name, s.Type, sourceTypes[s.Type].about})
	}
	return out
}

// formatSeams renders seams as YAML comments, one per line.
func formatSeams(ss []Seam) string {
	var b strings.Builder
	b.WriteString("# implementations in use:\n")
	for _, s := range ss {
		fmt.Fprintf(&b, "#   %-18s %s — %s\n", s.Seam+":", s.Name, s.About)
	}
	return b.String()
}

func openBundled(m *Main, sc config.SourceConfig, _ string) (connectors.Source, fs.FS, error) {
	fsys := handbook.Source()
	return files.New(sc.Name, fsys, files.Options{
		WebURL:   m.publicURL() + "/docs/" + sc.Name + "/{path}",
		MaxBytes: int(m.Config.Sync.MaxDocBytes),
	}), fsys, nil
}

func openDir(m *Main, sc config.SourceConfig, _ string) (connectors.Source, fs.FS, error) {
	fsys := os.DirFS(sc.Dir.Path)
	web := sc.Dir.WebURL
	if web == "" {
		web = m.publicURL() + "/docs/" + sc.Name + "/{path}"
	}
	return files.New(sc.Name, fsys, files.Options{
		Include: sc.Dir.Include, Exclude: sc.Dir.Exclude, WebURL: web, MaxBytes: int(m.Config.Sync.MaxDocBytes),
	}), fsys, nil
}

func openGit(m *Main, sc config.SourceConfig, dataDir string) (connectors.Source, fs.FS, error) {
	g := sc.Git
	src, err := git.New(sc.Name, git.Options{
		URL: g.URL, Path: g.Path, Branch: g.Branch, Subdir: g.Subdir,
		Include: g.Include, Exclude: g.Exclude, WebURL: g.WebURL,
		Auth:    git.Auth{Username: g.Username, Token: g.Token},
		DataDir: dataDir, MaxBytes: int(m.Config.Sync.MaxDocBytes), Logger: m.Log,
	})
	return src, nil, err
}

func openLocal(ctx context.Context, _ *Main, dataDir string) (search.Index, error) {
	return local.Open(ctx, filepath.Join(dataDir, "index.db"), local.Options{})
}

func openTypesense(ctx context.Context, m *Main, _ string) (search.Index, error) {
	return typesense.Open(ctx, typesenseOptions(m))
}

// typesenseOptions maps the index.typesense section (and the embedder's
// dimension, so that the alias exists before the first sync) to the
// backend's options.
func typesenseOptions(m *Main) typesense.Options {
	ts := m.Config.Index.Typesense
	retries := ts.Retries
	if retries == 0 {
		retries = -1 // the backend's 0 means one retry per other node
	}
	types := map[string]string{}
	for _, s := range m.Config.Sources {
		types[s.Name] = s.Type
	}
	dim := 0
	if m.Embedder != nil {
		dim = m.Embedder.Dim()
	}
	return typesense.Options{
		Nodes: ts.Nodes, NearestNode: ts.NearestNode, APIKey: ts.APIKey, Alias: ts.Collection,
		Timeout: ts.Timeout, Retries: retries, Dim: dim, SourceTypes: types, Logger: m.Log,
	}
}

func openOffline(m *Main, dataDir string) (search.Embedder, error) {
	return offline.NewEmbedder(offline.Options{
		Dim: m.Config.Embedder.Dim, ModelPath: filepath.Join(dataDir, "offline-embedder.bin"), Logger: m.Log,
	}), nil
}

func openOfflineAnswerer(m *Main) (answer.Stages, error) {
	return answer.Stages{
		Rewriter: answer.Standalone{Corpus: m.Corpus},
		Reranker: answer.PageOrder{},
		Gate: answer.NewRelevance(answer.GateOptions{
			MaxSources: m.Config.Answerer.MaxSources,
			MinScore:   m.Config.Answerer.MinScore,
			Corpus:     m.Corpus,
		}, m.Log),
	}, nil
}

// Registry is the document registry the sync engine records into.
var _ connectors.Registry = (*store.DB)(nil)
