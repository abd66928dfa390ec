package confluence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/docent-hq/docent/connectors/webapi"
)

// cloudAPI is Confluence Cloud's REST API v2 under base
// ("https://acme.atlassian.net/wiki"): cursor pagination through
// _links.next (or the Link header), bodies in storage format.
type cloudAPI struct {
	c                      *webapi.Client
	base                   string
	pageSize, bodyPageSize int
}

// The v2 shapes docent reads (see the API's PageBulk, Space and Label).
type (
	v2Links struct {
		Next   string `json:"next"`
		WebUI  string `json:"webui"`
		TinyUI string `json:"tinyui"`
	}
	v2Page struct {
		ID       string `json:"id"`
		Status   string `json:"status"`
		Title    string `json:"title"`
		SpaceID  string `json:"spaceId"`
		ParentID string `json:"parentId"`
		AuthorID string `json:"authorId"`
		Version  struct {
			Number    int       `json:"number"`
			CreatedAt time.Time `json:"createdAt"`
			AuthorID  string    `json:"authorId"`
		} `json:"version"`
		Body struct {
			Storage *struct {
				Representation string `json:"representation"`
				Value          string `json:"value"`
			} `json:"storage"`
		} `json:"body"`
		Links v2Links `json:"_links"`
	}
	v2Space struct {
		ID   string `json:"id"`
		Key  string `json:"key"`
		Name string `json:"name"`
	}
	v2Label struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Prefix string `json:"prefix"`
	}
	v2List[T any] struct {
		Results []T     `json:"results"`
		Links   v2Links `json:"_links"`
	}
)

func (p v2Page) page(spaceKey string) page {
	out := page{ID: p.ID, Title: p.Title, SpaceKey: spaceKey, ParentID: p.ParentID,
		Version: p.Version.Number, Modified: p.Version.CreatedAt, WebUI: p.Links.WebUI}
	if p.Body.Storage != nil {
		out.Body, out.HasBody = p.Body.Storage.Value, true
	}
	return out
}

// each follows a v2 listing from first through its next links, calling fn
// with each result; fn returning errStop ends it.
func each[T any](ctx context.Context, a *cloudAPI, first string, fn func(T) error) error {
	next := first
	for next != "" {
		var res v2List[T]
		h, err := a.c.GetJSON(ctx, next, &res)
		if err != nil {
			return err
		}
		for _, r := range res.Results {
			if err := fn(r); err != nil {
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
		}
		switch {
		case res.Links.Next != "":
			next = webapi.Resolve(a.base, res.Links.Next)
		default:
			next = webapi.NextLink(h, a.base)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (a *cloudAPI) url(path string, q url.Values) string {
	u := a.base + "/api/v2" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

func (a *cloudAPI) spaces(ctx context.Context, keys []string) ([]space, error) {
	found := map[string]space{}
	q := url.Values{"keys": {strings.Join(keys, ",")}, "limit": {"250"}}
	err := each(ctx, a, a.url("/spaces", q), func(s v2Space) error {
		found[s.Key] = space{ID: s.ID, Key: s.Key, Name: s.Name}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list spaces: %w", err)
	}
	out := make([]space, 0, len(keys))
	for _, k := range keys {
		s, ok := found[k]
		if !ok {
			return nil, fmt.Errorf("space %s does not exist or is not visible to this account", k)
		}
		out = append(out, s)
	}
	return out, nil
}

func (a *cloudAPI) newestFirst() bool { return true }

func (a *cloudAPI) pages(ctx context.Context, sp space, bodies bool, limit int, fn func(page) error) error {
	q := url.Values{"limit": {strconv.Itoa(limit)}, "status": {"current"}}
	if bodies {
		q.Set("body-format", "storage")
		q.Set("sort", "-modified-date")
	}
	return each(ctx, a, a.url("/spaces/"+url.PathEscape(sp.ID)+"/pages", q), func(p v2Page) error {
		if p.Status != "" && p.Status != "current" {
			return nil
		}
		return fn(p.page(sp.Key))
	})
}

func (a *cloudAPI) page(ctx context.Context, sp space, id string) (page, error) {
	var p v2Page
	if _, err := a.c.GetJSON(ctx, a.url("/pages/"+url.PathEscape(id), url.Values{"body-format": {"storage"}}), &p); err != nil {
		return page{}, err
	}
	if p.Status != "" && p.Status != "current" {
		// Trashed or archived since the listing: as good as gone.
		return page{}, &webapi.StatusError{Name: "confluence", Method: http.MethodGet, Path: "/pages/" + id,
			Code: http.StatusNotFound, Message: "page status " + p.Status}
	}
	return p.page(sp.Key), nil
}

func (a *cloudAPI) labels(ctx context.Context, p *page) error {
	var labels []string
	err := each(ctx, a, a.url("/pages/"+url.PathEscape(p.ID)+"/labels", url.Values{"limit": {"250"}}), func(l v2Label) error {
		labels = append(labels, l.Name)
		return nil
	})
	if err != nil {
		return err
	}
	p.Labels, p.LabelsKnown = labels, true
	return nil
}

// excluded finds the pages of sp with any of the labels.
func (a *cloudAPI) excluded(ctx context.Context, sp space, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := a.labelPages(ctx, sp, func(l v2Label) bool {
		for _, n := range names {
			if strings.EqualFold(l.Name, n) {
				return true
			}
		}
		return false
	}, func(l v2Label, pageID string) { out[pageID] = true })
	return out, err
}

func (a *cloudAPI) spaceLabels(ctx context.Context, sp space) (map[string][]string, error) {
	out := map[string][]string{}
	err := a.labelPages(ctx, sp, func(v2Label) bool { return true }, func(l v2Label, pageID string) {
		out[pageID] = append(out[pageID], l.Name)
	})
	return out, err
}

// labelPages calls fn with each page of sp carrying a label that want
// picks: the space's content labels give the labels' IDs, and each label
// lists its pages.
func (a *cloudAPI) labelPages(ctx context.Context, sp space, want func(v2Label) bool, fn func(l v2Label, pageID string)) error {
	var labels []v2Label
	err := each(ctx, a, a.url("/spaces/"+url.PathEscape(sp.ID)+"/content/labels", url.Values{"limit": {"250"}}), func(l v2Label) error {
		if want(l) {
			labels = append(labels, l)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range labels {
		q := url.Values{"space-id": {sp.ID}, "limit": {"250"}}
		err := each(ctx, a, a.url("/labels/"+url.PathEscape(l.ID)+"/pages", q), func(p v2Page) error {
			fn(l, p.ID)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
