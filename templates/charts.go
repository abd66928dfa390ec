package templates

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/docent-hq/docent"
)

// Chart geometry shared by the SVG charts (user units).
const (
	chartW, chartH = 720, 200
	padL, padR     = 36, 10
	padT, padB     = 10, 28
)

// Rect is one bar of a chart.
type Rect struct {
	X, Y, W, H string
	Class      string
	// Title is the tooltip ("2026-03-01 slack: 4").
	Title string
}

// Label is a text on a chart.
type Label struct {
	X, Y, Text, Anchor string
}

// Legend is one series' swatch.
type Legend struct{ Class, Label string }

// BarChart is a stacked bar chart.
type BarChart struct {
	ViewBox string
	Bars    []Rect
	Labels  []Label
	Legend  []Legend
	// Empty is set when there is nothing to draw.
	Empty bool
}

// Series is one line of a line chart.
type Series struct {
	Class, Label string
	// Points is the polyline's "x,y x,y" list.
	Points string
	Dots   []Label
}

// LineChart is a line chart of values in [0, 1].
type LineChart struct {
	ViewBox string
	// Grid are the y coordinates of the axis's gridlines.
	Grid   []string
	Series []Series
	Labels []Label
	Legend []Legend
	Empty  bool
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// DailyChart stacks questions per day by platform over days (each
// "2006-01-02", in order).
func DailyChart(days []string, counts []docent.DayCount) BarChart {
	c := BarChart{ViewBox: "0 0 " + strconv.Itoa(chartW) + " " + strconv.Itoa(chartH)}
	var platforms []string
	perDay := map[string]map[string]int{}
	total := map[string]int{}
	for _, d := range counts {
		if !slices.Contains(platforms, d.Platform) {
			platforms = append(platforms, d.Platform)
		}
		if perDay[d.Day] == nil {
			perDay[d.Day] = map[string]int{}
		}
		perDay[d.Day][d.Platform] += d.N
		total[d.Day] += d.N
	}
	slices.Sort(platforms)
	peak := 0
	for _, n := range total {
		peak = max(peak, n)
	}
	if peak == 0 || len(days) == 0 {
		c.Empty = true
		return c
	}
	for i, p := range platforms {
		c.Legend = append(c.Legend, Legend{Class: "p" + strconv.Itoa(i%6), Label: p})
	}
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	slot := plotW / float64(len(days))
	barW := max(slot*0.7, 1)
	for i, d := range days {
		x := float64(padL) + float64(i)*slot + (slot-barW)/2
		y := float64(padT) + plotH
		for pi, p := range platforms {
			n := perDay[d][p]
			if n == 0 {
				continue
			}
			h := plotH * float64(n) / float64(peak)
			y -= h
			c.Bars = append(c.Bars, Rect{X: f(x), Y: f(y), W: f(barW), H: f(h), Class: "p" + strconv.Itoa(pi%6),
				Title: d + " " + p + ": " + strconv.Itoa(n)})
		}
		if len(days) <= 10 || i%(len(days)/7+1) == 0 {
			c.Labels = append(c.Labels, Label{X: f(x + barW/2), Y: f(float64(chartH - 10)), Text: d[5:], Anchor: "middle"})
		}
	}
	c.Labels = append(c.Labels,
		Label{X: f(padL - 4), Y: f(padT + 8), Text: strconv.Itoa(peak), Anchor: "end"},
		Label{X: f(padL - 4), Y: f(float64(chartH - padB)), Text: "0", Anchor: "end"})
	return c
}

// TrendChart draws one line per named series of values in [0, 1], one
// point per run, oldest first; labels name the runs. The axis spans the
// values' own range (rounded out to tenths, at least 0.2 wide), so that a
// drop from 0.83 to 0.76 is seen, not flattened on a 0–1 axis.
func TrendChart(labels []string, names []string, values [][]float64) LineChart {
	c := LineChart{ViewBox: "0 0 " + strconv.Itoa(chartW) + " " + strconv.Itoa(chartH)}
	if len(labels) == 0 {
		c.Empty = true
		return c
	}
	lo, hi := axisRange(values)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	x := func(i int) float64 {
		if len(labels) == 1 {
			return float64(padL) + plotW/2
		}
		return float64(padL) + plotW*float64(i)/float64(len(labels)-1)
	}
	y := func(v float64) float64 { return float64(padT) + plotH*(1-(min(max(v, lo), hi)-lo)/(hi-lo)) }
	for si, name := range names {
		s := Series{Class: "l" + strconv.Itoa(si%4), Label: name}
		var pts []string
		for i := range labels {
			v := values[si][i]
			pts = append(pts, f(x(i))+","+f(y(v)))
			s.Dots = append(s.Dots, Label{X: f(x(i)), Y: f(y(v)), Text: name + " " + labels[i] + ": " + Rate(v)})
		}
		s.Points = strings.Join(pts, " ")
		c.Series = append(c.Series, s)
		c.Legend = append(c.Legend, Legend{Class: "p" + strconv.Itoa(si%4), Label: name})
	}
	for i, l := range labels {
		if len(labels) <= 12 || i%(len(labels)/10+1) == 0 {
			c.Labels = append(c.Labels, Label{X: f(x(i)), Y: f(float64(chartH - 10)), Text: l, Anchor: "middle"})
		}
	}
	for _, v := range []float64{lo, (lo + hi) / 2, hi} {
		c.Labels = append(c.Labels, Label{X: f(padL - 4), Y: f(y(v) + 3), Text: strconv.FormatFloat(v, 'f', 2, 64), Anchor: "end"})
		c.Grid = append(c.Grid, f(y(v)))
	}
	return c
}

// axisRange is the [lo, hi] a trend's axis spans: the values' range
// widened to tenths, at least 0.2 wide, within [0, 1].
func axisRange(values [][]float64) (lo, hi float64) {
	lo, hi = 1, 0
	for _, s := range values {
		for _, v := range s {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if lo > hi {
		return 0, 1
	}
	lo, hi = math.Floor(lo*10-0.5)/10, math.Ceil(hi*10+0.5)/10
	for hi-lo < 0.2 {
		lo, hi = lo-0.05, hi+0.05
	}
	if lo < 0 {
		lo, hi = 0, max(hi, 0.2)
	}
	if hi > 1 {
		lo, hi = min(lo, 0.8), 1
	}
	return max(lo, 0), min(hi, 1)
}
