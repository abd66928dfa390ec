package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// maxCachedTrees bounds the decoded trees kept during one history walk.
const maxCachedTrees = 50_000

// history attributes paths to the commits that last changed them.
type history struct {
	r     *reader
	trees map[plumbing.Hash]*object.Tree
	// pending counts the unattributed wanted paths under each directory
	// ("" is the root, "a/b/" a folder), so the walk only opens folders
	// that can still hold an answer.
	pending map[string]int
	want    map[string]bool
	found   map[string]*object.Commit
}

// lastCommits finds, for each wanted Subdir-relative path, the most recent
// commit that changed it. It walks the history once from head, newest
// committer time first, comparing each commit's tree with its first
// parent's, and stops as soon as every path is attributed. The comparison
// descends only into folders whose hash changed and that still hold an
// unattributed path, and decoded trees are shared between a commit and its
// parent, so each walked commit costs a few tree reads.
//
// A merge commit is credited with a path only when its version differs
// from every parent (a conflict resolution); otherwise the commit that made
// the change on its branch is found later in the walk, as git log does.
func (r *reader) lastCommits(ctx context.Context, want map[string]bool) (map[string]*object.Commit, error) {
	h := &history{
		r:       r,
		trees:   map[plumbing.Hash]*object.Tree{},
		pending: map[string]int{},
		want:    want,
		found:   make(map[string]*object.Commit, len(want)),
	}
	for p := range want {
		for _, dir := range ancestors(p) {
			h.pending[dir]++
		}
	}
	iter := object.NewCommitIterCTime(r.head, nil, nil)
	defer iter.Close()
	walked := 0
	for len(h.found) < len(want) {
		c, err := iter.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("walk history: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		walked++
		if err := h.visit(c); err != nil {
			return nil, err
		}
	}
	r.s.log.DebugContext(ctx, "git: attributed files to commits",
		slog.Int("files", len(want)), slog.Int("found", len(h.found)), slog.Int("commits_walked", walked))
	return h.found, nil
}

// visit credits c with the wanted paths it changed.
func (h *history) visit(c *object.Commit) error {
	tree, err := h.subtree(c.TreeHash)
	if err != nil {
		return fmt.Errorf("read commit %s: %w", c.Hash, err)
	}
	var parents []*object.Tree
	for _, ph := range c.ParentHashes {
		pc, err := h.r.repo.CommitObject(ph)
		if err != nil {
			return fmt.Errorf("read parent of %s: %w", c.Hash, err)
		}
		pt, err := h.subtree(pc.TreeHash)
		if err != nil {
			return fmt.Errorf("read commit %s: %w", pc.Hash, err)
		}
		parents = append(parents, pt)
	}
	var first *object.Tree
	if len(parents) > 0 {
		first = parents[0]
	}
	var changed []string
	if err := h.diff(first, tree, "", func(p string, blob plumbing.Hash) {
		if len(parents) < 2 || !sameInAnotherParent(p, blob, parents[1:]) {
			changed = append(changed, p)
		}
	}); err != nil {
		return fmt.Errorf("compare %s with its parent: %w", c.Hash.String()[:12], err)
	}
	for _, p := range changed {
		h.found[p] = c
		for _, dir := range ancestors(p) {
			h.pending[dir]--
		}
	}
	return nil
}

// diff calls fn for each unattributed wanted file under prefix whose blob
// in b differs from a (a nil tree is empty).
func (h *history) diff(a, b *object.Tree, prefix string, fn func(p string, blob plumbing.Hash)) error {
	if b == nil || (a != nil && a.Hash == b.Hash) || h.pending[prefix] <= 0 {
		return nil
	}
	var old map[string]object.TreeEntry
	if a != nil {
		old = make(map[string]object.TreeEntry, len(a.Entries))
		for _, e := range a.Entries {
			old[e.Name] = e
		}
	}
	for _, e := range b.Entries {
		prev, had := old[e.Name]
		if had && prev.Hash == e.Hash && prev.Mode == e.Mode {
			continue
		}
		p := prefix + e.Name
		if e.Mode == filemode.Dir {
			if h.pending[p+"/"] <= 0 {
				continue
			}
			sub, err := h.tree(e.Hash)
			if err != nil {
				return err
			}
			var subPrev *object.Tree
			if had && prev.Mode == filemode.Dir {
				if subPrev, err = h.tree(prev.Hash); err != nil {
					return err
				}
			}
			if err := h.diff(subPrev, sub, p+"/", fn); err != nil {
				return err
			}
			continue
		}
		if h.want[p] && h.found[p] == nil {
			fn(p, e.Hash)
		}
	}
	return nil
}

// tree returns a decoded tree, from the cache when it was read before.
func (h *history) tree(hash plumbing.Hash) (*object.Tree, error) {
	if t, ok := h.trees[hash]; ok {
		return t, nil
	}
	t, err := h.r.repo.TreeObject(hash)
	if err != nil {
		return nil, err
	}
	if len(h.trees) >= maxCachedTrees {
		clear(h.trees)
	}
	h.trees[hash] = t
	return t, nil
}

// subtree returns the Subdir folder of a root tree, nil when absent.
func (h *history) subtree(root plumbing.Hash) (*object.Tree, error) {
	t, err := h.tree(root)
	if err != nil || h.r.s.subdir == "" {
		return t, err
	}
	for _, name := range strings.Split(h.r.s.subdir, "/") {
		var next *object.TreeEntry
		for i := range t.Entries {
			if t.Entries[i].Name == name {
				next = &t.Entries[i]
				break
			}
		}
		if next == nil || next.Mode != filemode.Dir {
			return nil, nil
		}
		if t, err = h.tree(next.Hash); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// ancestors lists the folders holding p, as pending keys: "" (the root),
// then "a/", "a/b/" for "a/b/c.md".
func ancestors(p string) []string {
	out := []string{""}
	dir := path.Dir(p)
	if dir == "." {
		return out
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		out = append(out, strings.Join(parts[:i+1], "/")+"/")
	}
	return out
}

// sameInAnotherParent reports whether one of the other parents of a merge
// already has the blob at p.
func sameInAnotherParent(p string, h plumbing.Hash, others []*object.Tree) bool {
	for _, t := range others {
		if t == nil {
			continue
		}
		if e, err := t.FindEntry(p); err == nil && e.Hash == h {
			return true
		}
	}
	return false
}
