package notion

import "strings"

// VisibleText is the text a reader sees on a page of blocks, for the fuzz
// test: every rich text, caption, cell, title and equation, separated by
// spaces. (URLs are not visible text.)
func VisibleText(blocks []*Block) string {
	var b strings.Builder
	var walk func([]*Block)
	add := func(rt []RichText) {
		for _, r := range rt {
			b.WriteString(r.PlainText)
			b.WriteByte(' ')
		}
	}
	walk = func(blocks []*Block) {
		for _, bl := range blocks {
			if bl == nil || bl.Archived || bl.InTrash {
				continue
			}
			switch bl.Type {
			case "table_of_contents", "breadcrumb", "link_to_page":
			default:
				add(bl.Data.RichText)
				add(bl.Data.Caption)
				for _, c := range bl.Data.Cells {
					add(c)
				}
				if bl.Type == "child_page" || bl.Type == "child_database" {
					b.WriteString(bl.Data.Title + " ")
				}
				if bl.Type == "equation" {
					b.WriteString(bl.Data.Expression + " ")
				}
				if strings.HasPrefix(bl.Type, "image") || bl.Type == "file" || bl.Type == "pdf" || bl.Type == "video" || bl.Type == "audio" {
					if len(bl.Data.Caption) == 0 {
						b.WriteString(bl.Data.Name + " ")
					}
				}
			}
			walk(bl.Children)
		}
	}
	walk(blocks)
	return b.String()
}
