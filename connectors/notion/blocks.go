package notion

import (
	"encoding/json"
	"time"
)

// RichText is one run of Notion rich text: text, a mention or an
// equation, with its annotations and link.
type RichText struct {
	Type        string      `json:"type"`
	PlainText   string      `json:"plain_text"`
	Href        string      `json:"href"`
	Annotations Annotations `json:"annotations"`
}

// Annotations are a rich text run's styles.
type Annotations struct {
	Bold          bool `json:"bold"`
	Italic        bool `json:"italic"`
	Strikethrough bool `json:"strikethrough"`
	Underline     bool `json:"underline"`
	Code          bool `json:"code"`
}

// Block is a Notion block as GET /v1/blocks/{id}/children returns it, with
// its children attached once fetched. The type's payload (the object
// under the key named by Type) is read into Data.
type Block struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	HasChildren bool      `json:"has_children"`
	Archived    bool      `json:"archived"`
	InTrash     bool      `json:"in_trash"`
	LastEdited  time.Time `json:"last_edited_time"`
	// Data is the type's payload.
	Data BlockData `json:"-"`
	// Children are the nested blocks (fetched when HasChildren). Test
	// fixtures give them inline under "children".
	Children []*Block `json:"children,omitempty"`
}

// BlockData holds the fields of every block type's payload docent reads;
// each type uses some of them.
type BlockData struct {
	RichText []RichText `json:"rich_text"`
	// Checked is a to-do's state.
	Checked bool `json:"checked"`
	// Language is a code block's language.
	Language string `json:"language"`
	// Caption is the caption of code, images, files and bookmarks.
	Caption []RichText `json:"caption"`
	// Icon is a callout's icon.
	Icon *Icon `json:"icon"`
	// Title names a child page or child database.
	Title string `json:"title"`
	// URL is a bookmark's, embed's or link preview's target.
	URL string `json:"url"`
	// Expression is an equation's TeX.
	Expression string `json:"expression"`
	// Cells are a table row's cells.
	Cells [][]RichText `json:"cells"`
	// HasColumnHeader says whether a table's first row is its header.
	HasColumnHeader bool `json:"has_column_header"`
	// SyncedFrom is set on a synced block that shows another one's
	// content (nil on the original).
	SyncedFrom *struct {
		BlockID string `json:"block_id"`
	} `json:"synced_from"`
	// External is a file block's external URL; Name its file name.
	External *struct {
		URL string `json:"url"`
	} `json:"external"`
	Name string `json:"name"`
	// PageID and DatabaseID are a link_to_page's target.
	PageID     string `json:"page_id"`
	DatabaseID string `json:"database_id"`
}

// Icon is an emoji or an image standing for a page or a callout.
type Icon struct {
	Type  string `json:"type"`
	Emoji string `json:"emoji"`
}

// UnmarshalJSON reads a block and its type's payload. Fields of an
// unexpected shape are left empty rather than failing the page.
func (b *Block) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*b = Block{}
	field := func(key string, v any) {
		if r, ok := raw[key]; ok {
			_ = json.Unmarshal(r, v)
		}
	}
	field("id", &b.ID)
	field("type", &b.Type)
	field("has_children", &b.HasChildren)
	field("archived", &b.Archived)
	field("in_trash", &b.InTrash)
	field("last_edited_time", &b.LastEdited)
	field("children", &b.Children)
	if b.Type != "" && b.Type != "children" {
		field(b.Type, &b.Data)
	}
	return nil
}
