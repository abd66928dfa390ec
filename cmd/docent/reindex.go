package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/docent-hq/docent/config"
	"github.com/docent-hq/docent/search/local"
	"github.com/docent-hq/docent/search/typesense"
)

// Reindex copies the local index in the data dir into the Typesense
// cluster of index.typesense, chunks and stored vectors as they are: no
// document is re-read and nothing is re-embedded. The copy is built in a
// new versioned collection and the alias moved to it in one step; when the
// cluster already holds exactly the local chunks, nothing is written. The
// config is left as it is: switching index.backend to typesense is the
// operator's step, printed at the end (the file may be a ConfigMap, a
// template, or absent).
func (m *Main) Reindex(ctx context.Context, args []string) error {
	fl := m.flagSet("reindex")
	to := fl.String("to", "", "`BACKEND` to copy the local index into: typesense")
	rest, err := m.parse(fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("reindex takes no arguments, got %q: %w", rest, errUsage)
	}
	if *to != config.BackendTypesense {
		fmt.Fprintln(m.Stderr, "usage: docent reindex --to typesense")
		return fmt.Errorf("reindex: --to must be %q: %w", config.BackendTypesense, errUsage)
	}
	if err := m.LoadConfig(); err != nil {
		return err
	}
	ts := m.Config.Index.Typesense
	if len(ts.Nodes) == 0 || ts.APIKey == "" {
		return errors.New("reindex: set index.typesense.nodes and index.typesense.api_key first")
	}
	path := filepath.Join(m.Config.DataDir, "index.db")
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("reindex: no local index at %s (run docent sync with index.backend: local first)", path)
	}
	unlock, err := lockDataDir(m.Config.DataDir)
	if err != nil {
		return err
	}
	m.unlock = unlock
	src, err := local.Open(ctx, path, local.Options{})
	if err != nil {
		return err
	}
	m.closers = append(m.closers, src)
	dst, err := typesense.Open(ctx, typesenseOptions(m.env(m.Config.DataDir), 0))
	if err != nil {
		return err
	}
	m.closers = append(m.closers, dst)
	res, err := dst.CopyFrom(ctx, src)
	if err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	if res.Copied == 0 {
		fmt.Fprintf(m.Stdout, "typesense already holds the %d chunks of the local index (alias %s -> %s): nothing to do\n",
			res.Chunks, dst.Alias(), res.Collection)
	} else {
		fmt.Fprintf(m.Stdout, "copied %d chunks with their vectors into %s (alias %s); nothing was re-embedded\n",
			res.Copied, res.Collection, dst.Alias())
	}
	if m.Config.Index.Backend != config.BackendTypesense {
		fmt.Fprintln(m.Stdout, "now set index.backend: typesense in the config and restart docent")
	}
	return nil
}
