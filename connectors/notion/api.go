package notion

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The API shapes docent reads, as of the pinned Notion-Version.

// object is a page or a database as search, database queries and
// GET /v1/pages return them.
type object struct {
	Object         string    `json:"object"` // "page" or "database"
	ID             string    `json:"id"`
	LastEditedTime time.Time `json:"last_edited_time"`
	LastEditedBy   struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"last_edited_by"`
	Archived   bool                `json:"archived"`
	InTrash    bool                `json:"in_trash"`
	Parent     parent              `json:"parent"`
	Properties map[string]property `json:"properties"`
	// Title is a database's title (pages have a title property).
	Title []RichText `json:"title"`
	URL   string     `json:"url"`
}

// parent is where a page, database or block lives.
type parent struct {
	Type       string `json:"type"` // page_id, database_id, block_id, workspace
	PageID     string `json:"page_id"`
	DatabaseID string `json:"database_id"`
	BlockID    string `json:"block_id"`
}

func (p parent) id() string { return p.PageID + p.DatabaseID + p.BlockID }

// list is a paginated list response.
type list[T any] struct {
	Results    []T    `json:"results"`
	NextCursor string `json:"next_cursor"`
	HasMore    bool   `json:"has_more"`
}

// property is a page property's value (or, in a database, its schema,
// which carries no value). Values of types docent does not read are
// ignored, as are values it cannot decode.
type property struct {
	Type string
	// Text is the value as text ("" for none); Names the values of a
	// select, multi-select, status or people property.
	Text  string
	Names []string
	// Title is set for the title property.
	Title []RichText
}

// UnmarshalJSON reads a property value leniently: a value of an unknown
// or unexpected shape is left empty rather than failing the page.
func (p *property) UnmarshalJSON(data []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil {
		return nil
	}
	p.Type = head.Type
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return nil
	}
	v := raw[head.Type]
	named := func(s string) { p.Names = append(p.Names, s) }
	switch head.Type {
	case "title":
		_ = json.Unmarshal(v, &p.Title)
		p.Text = plain(p.Title)
	case "rich_text":
		var rt []RichText
		_ = json.Unmarshal(v, &rt)
		p.Text = plain(rt)
	case "select", "status":
		var s *struct{ Name string }
		if json.Unmarshal(v, &s) == nil && s != nil && s.Name != "" {
			named(s.Name)
		}
	case "multi_select":
		var ss []struct{ Name string }
		_ = json.Unmarshal(v, &ss)
		for _, s := range ss {
			if s.Name != "" {
				named(s.Name)
			}
		}
	case "people", "created_by", "last_edited_by":
		var people []struct{ Name string }
		if head.Type != "people" {
			var one struct{ Name string }
			if json.Unmarshal(v, &one) == nil {
				people = append(people, one)
			}
		} else {
			_ = json.Unmarshal(v, &people)
		}
		for _, u := range people {
			if u.Name != "" {
				named(u.Name)
			}
		}
	case "date":
		var d *struct{ Start, End string }
		if json.Unmarshal(v, &d) == nil && d != nil {
			p.Text = d.Start
			if d.End != "" {
				p.Text += " → " + d.End
			}
		}
	case "number":
		var n *float64
		if json.Unmarshal(v, &n) == nil && n != nil {
			p.Text = strconv.FormatFloat(*n, 'f', -1, 64)
		}
	case "checkbox":
		var b bool
		if json.Unmarshal(v, &b) == nil {
			p.Text = map[bool]string{true: "yes", false: "no"}[b]
		}
	case "url", "email", "phone_number":
		var s *string
		if json.Unmarshal(v, &s) == nil && s != nil {
			p.Text = *s
		}
	case "formula":
		var f struct {
			Type    string
			String  *string
			Number  *float64
			Boolean *bool
		}
		if json.Unmarshal(v, &f) == nil {
			switch {
			case f.String != nil:
				p.Text = *f.String
			case f.Number != nil:
				p.Text = strconv.FormatFloat(*f.Number, 'f', -1, 64)
			case f.Boolean != nil:
				p.Text = map[bool]string{true: "yes", false: "no"}[*f.Boolean]
			}
		}
	case "unique_id":
		var u struct {
			Prefix *string
			Number *int
		}
		if json.Unmarshal(v, &u) == nil && u.Number != nil {
			p.Text = strconv.Itoa(*u.Number)
			if u.Prefix != nil && *u.Prefix != "" {
				p.Text = *u.Prefix + "-" + p.Text
			}
		}
	}
	return nil
}

// value is the property's value as text: its text, or its names joined.
func (p property) value() string {
	if p.Text != "" {
		return p.Text
	}
	return strings.Join(p.Names, ", ")
}

// title is a page's title (its title property) or a database's.
func (o object) title() string {
	if o.Object == "database" {
		return strings.TrimSpace(plain(o.Title))
	}
	for _, p := range o.Properties {
		if p.Type == "title" {
			return strings.TrimSpace(p.Text)
		}
	}
	return ""
}

// rowMeta is what a database row's properties say: labels (selects,
// multi-selects, statuses), owner (people), and a markdown list of every
// property with a value, in name order.
func (o object) rowMeta(names []string) (labels []string, owner, lines string) {
	var b strings.Builder
	for _, name := range names {
		p := o.Properties[name]
		if p.Type == "title" {
			continue
		}
		v := p.value()
		if v == "" {
			continue
		}
		switch p.Type {
		case "select", "multi_select", "status":
			labels = append(labels, p.Names...)
		case "people":
			if owner == "" {
				owner = strings.Join(p.Names, ", ")
			}
		}
		fmt.Fprintf(&b, "- **%s:** %s\n", escapeText(name), escapeText(oneLine(v)))
	}
	return labels, owner, b.String()
}
