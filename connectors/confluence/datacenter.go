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

// dcAPI is Confluence Data Center's (and Server's) REST API v1 under base
// (the site's base URL with its context path): offset pagination
// (start/limit, following _links.next), expansions for versions,
// ancestors, labels and bodies.
type dcAPI struct {
	c                      *webapi.Client
	base                   string
	pageSize, bodyPageSize int
}

// The v1 shapes docent reads (see the API's Content and ContentArray).
type (
	v1Content struct {
		ID     string `json:"id"`
		Type   string `json:"type"`
		Status string `json:"status"`
		Title  string `json:"title"`
		Space  *struct {
			Key string `json:"key"`
		} `json:"space"`
		Version struct {
			Number int       `json:"number"`
			When   time.Time `json:"when"`
			By     struct {
				DisplayName string `json:"displayName"`
				Username    string `json:"username"`
			} `json:"by"`
		} `json:"version"`
		Ancestors []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"ancestors"`
		Metadata struct {
			Labels struct {
				Results []struct {
					Name string `json:"name"`
				} `json:"results"`
			} `json:"labels"`
		} `json:"metadata"`
		Body struct {
			Storage *struct {
				Value          string `json:"value"`
				Representation string `json:"representation"`
			} `json:"storage"`
		} `json:"body"`
		Links struct {
			WebUI string `json:"webui"`
		} `json:"_links"`
	}
	v1Array struct {
		Results []v1Content `json:"results"`
		Start   int         `json:"start"`
		Limit   int         `json:"limit"`
		Size    int         `json:"size"`
		Links   struct {
			Next string `json:"next"`
		} `json:"_links"`
	}
	v1Space struct {
		ID   json64 `json:"id"`
		Key  string `json:"key"`
		Name string `json:"name"`
	}
)

// json64 is a numeric ID that may come as a number or a string.
type json64 string

// UnmarshalJSON takes the ID as a number or a string.
func (j *json64) UnmarshalJSON(b []byte) error {
	*j = json64(strings.Trim(string(b), `"`))
	return nil
}

func (c v1Content) page(spaceKey string) page {
	p := page{ID: c.ID, Title: c.Title, SpaceKey: spaceKey, Version: c.Version.Number,
		Modified: c.Version.When, Author: firstNonEmpty(c.Version.By.DisplayName, c.Version.By.Username),
		WebUI: c.Links.WebUI, LabelsKnown: true}
	for _, a := range c.Ancestors {
		p.Ancestors = append(p.Ancestors, ref{ID: a.ID, Title: a.Title})
	}
	if n := len(c.Ancestors); n > 0 {
		p.ParentID = c.Ancestors[n-1].ID
	}
	for _, l := range c.Metadata.Labels.Results {
		p.Labels = append(p.Labels, l.Name)
	}
	if c.Body.Storage != nil {
		p.Body, p.HasBody = c.Body.Storage.Value, true
	}
	return p
}

const (
	dcExpand     = "version,ancestors,metadata.labels"
	dcExpandBody = dcExpand + ",body.storage"
)

func (a *dcAPI) spaces(ctx context.Context, keys []string) ([]space, error) {
	out := make([]space, 0, len(keys))
	for _, k := range keys {
		var s v1Space
		_, err := a.c.GetJSON(ctx, a.base+"/rest/api/space/"+url.PathEscape(k), &s)
		if code := webapi.StatusCode(err); code == http.StatusNotFound || code == http.StatusForbidden {
			return nil, fmt.Errorf("space %s does not exist or is not visible to this account", k)
		}
		if err != nil {
			return nil, fmt.Errorf("space %s: %w", k, err)
		}
		out = append(out, space{ID: string(s.ID), Key: s.Key, Name: s.Name})
	}
	return out, nil
}

func (a *dcAPI) newestFirst() bool { return false }

func (a *dcAPI) pages(ctx context.Context, sp space, bodies bool, limit int, fn func(page) error) error {
	expand := dcExpand
	if bodies {
		expand = dcExpandBody
	}
	q := url.Values{"spaceKey": {sp.Key}, "type": {"page"}, "status": {"current"},
		"start": {"0"}, "limit": {strconv.Itoa(limit)}, "expand": {expand}}
	next := a.base + "/rest/api/content?" + q.Encode()
	for next != "" {
		var res v1Array
		if _, err := a.c.GetJSON(ctx, next, &res); err != nil {
			return err
		}
		for _, c := range res.Results {
			if c.Type != "" && c.Type != "page" || c.Status != "" && c.Status != "current" {
				continue
			}
			if err := fn(c.page(sp.Key)); err != nil {
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
		}
		next = ""
		if res.Links.Next != "" {
			next = a.resolve(res.Links.Next)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// resolve makes a v1 link ("/rest/api/content?...&start=25", relative to
// the base URL with its context path) absolute.
func (a *dcAPI) resolve(link string) string {
	if strings.HasPrefix(link, "http://") || strings.HasPrefix(link, "https://") {
		return link
	}
	u, err := url.Parse(a.base)
	if err != nil {
		return a.base + link
	}
	if u.Path != "" && strings.HasPrefix(link, u.Path+"/") {
		return u.Scheme + "://" + u.Host + link // already under the context path
	}
	return a.base + link
}

func (a *dcAPI) page(ctx context.Context, sp space, id string) (page, error) {
	var c v1Content
	u := a.base + "/rest/api/content/" + url.PathEscape(id) + "?" + url.Values{"expand": {dcExpandBody + ",space"}}.Encode()
	if _, err := a.c.GetJSON(ctx, u, &c); err != nil {
		return page{}, err
	}
	if c.Status != "" && c.Status != "current" || c.Space != nil && c.Space.Key != sp.Key {
		// Trashed, or moved to another space, since the listing.
		return page{}, &webapi.StatusError{Name: "confluence", Method: http.MethodGet, Path: "/rest/api/content/" + id,
			Code: http.StatusNotFound, Message: "page is no longer current in space " + sp.Key}
	}
	return c.page(sp.Key), nil
}

func (a *dcAPI) labels(context.Context, *page) error { return nil } // listed with the page

func (a *dcAPI) excluded(context.Context, space, []string) (map[string]bool, error) {
	return nil, nil // labels come with the listing
}

func (a *dcAPI) spaceLabels(context.Context, space) (map[string][]string, error) {
	return nil, nil // labels come with the listing
}
