package chart

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted/hostile"
)

// threeRanks is a hand-made job: rank 0 (the outlier) peaks at 900 B one
// second into its 2 s trace; rank 1's trace lasts 1 s; rank 2's 2 s.
// Each starts at its own clock time.
func threeRanks() []RankLine {
	pt := func(i int, s float64, a, r int64) analysis.Point {
		return analysis.Point{Index: i, TimeUS: int64(s * 1e6), Allocated: a, Reserved: r}
	}
	return []RankLine{
		{Label: "rank 0", Outlier: true, Points: []analysis.Point{pt(-1, 1, 100, 200), pt(5, 2, 900, 1000), pt(9, 3, 400, 1000)}},
		{Label: "rank 1", Points: []analysis.Point{pt(0, 5, 100, 200), pt(4, 5.5, 300, 400), pt(8, 6, 200, 400)}},
		{Label: "rank 2", Points: []analysis.Point{pt(0, 10, 200, 200), pt(3, 11, 400, 600), pt(9, 12, 200, 600)}},
	}
}

func TestRanksGeometry(t *testing.T) {
	c := NewRanks(threeRanks(), RanksOptions{Unit: bytesize.Binary, BandLo: 44, BandHi: 556, Median: 300})
	// 900 B × 1.05 → an axis to 1000 B; x: seconds since each rank's
	// first entry, the longest trace 2 s, in steps of 0.5 s.
	if !c.Time || c.SpanUS != 2_000_000 || c.Top != 1000 {
		t.Fatalf("time %v span %d top %d", c.Time, c.SpanUS, c.Top)
	}
	var labels []string
	for _, tk := range c.XTicks {
		labels = append(labels, tk.Label)
	}
	if strings.Join(labels, ",") != "0.0 s,0.5 s,1.0 s,1.5 s,2.0 s" || c.XTicks[4].X != 1 {
		t.Errorf("x ticks %+v", c.XTicks)
	}
	for _, tt := range []struct {
		k, j int
		x    float64
	}{{0, 1, 0.5}, {1, 1, 0.25}, {1, 2, 0.5}, {2, 2, 1}} {
		if got := c.X(tt.k, tt.j); got != tt.x {
			t.Errorf("X(%d, %d) = %v, want %v", tt.k, tt.j, got, tt.x)
		}
	}
	if v, ok := c.At(1, 0.25); !ok || v != 300 {
		t.Errorf("At(1, 0.25) = %v %v, want 300", v, ok)
	}
	if _, ok := c.At(1, 0.75); ok {
		t.Error("rank 1's 1 s trace reaches 1.5 s")
	}
	// At 1 s: rank 0 holds 900, rank 1 200, rank 2 400.
	for _, tt := range []struct {
		x, y float64
		want int
	}{{0.5, 0.6, 2}, {0.5, 0.05, 0}, {0.5, 0.79, 1}, {0.9, 1, 2}, {0.9, 0.45, 0}} {
		if got := c.Nearest(tt.x, tt.y); got != tt.want {
			t.Errorf("Nearest(%v, %v) = %d, want %d", tt.x, tt.y, got, tt.want)
		}
	}
	if got := c.Nearest(1.5, 0.5); got != -1 {
		t.Errorf("Nearest beyond every line = %d", got)
	}
	if checkMarkup(t, "ranks chart", c.HTML, "div", "svg", "line", "rect", "path", "title", "span") != 0 {
		t.Error("a hand-made label holds the hostile marker")
	}
	// The outlier is drawn last (on top), in red.
	if i, j := strings.Index(c.HTML, `data-line="0"`), strings.Index(c.HTML, `data-line="2"`); i < j ||
		!strings.Contains(c.HTML, `class="snap-rk-line snap-rk-outlier" data-line="0"`) {
		t.Error("the outlier is not drawn above the others")
	}
	golden(t, "ranks.html", c.HTML)

	r := NewRanks(threeRanks(), RanksOptions{Unit: bytesize.Decimal, Reserved: true})
	// 1000 B × 1.05 → five steps of 250 B.
	if r.Top != 1250 || strings.Contains(r.HTML, "snap-rk-band") {
		t.Errorf("reserved: top %d, band drawn without one", r.Top)
	}
}

// TestRanksNoTime: a rank without times (torch 2.0 files) puts every rank
// on the share of its trace.
func TestRanksNoTime(t *testing.T) {
	lines := threeRanks()
	for j := range lines[1].Points {
		lines[1].Points[j].TimeUS = 0
	}
	c := NewRanks(lines, RanksOptions{})
	if c.Time || c.SpanUS != 0 || c.XTicks[2].Label != "50 %" {
		t.Fatalf("time %v span %d ticks %+v", c.Time, c.SpanUS, c.XTicks)
	}
	// rank 0: entries -1 … 9, the peak at entry 5 of 10 → 0.6.
	if x := c.X(0, 1); x != 0.6 {
		t.Errorf("X(0, 1) = %v, want 0.6", x)
	}
	if NewRanks([]RankLine{{Label: "rank 0"}}, RanksOptions{}) != nil {
		t.Error("a chart of no points")
	}
}

// TestHostileRanks names the ranks with hostile names (a rank's label
// comes from its file name): the chart is well-formed and shows them as
// text.
func TestHostileRanks(t *testing.T) {
	var lines []RankLine
	for k, n := range hostile.Names() {
		l := threeRanks()[k%3]
		l.Label = n.Text
		lines = append(lines, l)
	}
	c := NewRanks(lines, RanksOptions{})
	if checkMarkup(t, "ranks chart", c.HTML, "div", "svg", "line", "rect", "path", "title", "span") == 0 {
		t.Error("no line shows a hostile name: the test does not test")
	}
}

// TestRankTable writes a table of four rows, one per state, and checks the
// data the page's tests and the open buttons read, then hostile file names
// and errors.
func TestRankTable(t *testing.T) {
	rows := []RankRow{
		{Index: 0, Rank: 0, Label: "rank 0", File: "job/rank0.pickle", State: "done", Outlier: true,
			Why: []string{"peak allocated 6.00 GiB above the median 40.00 GiB"}, Alloc: 46 << 30, Res: 50 << 30,
			FinalAlloc: 1 << 30, FinalRes: 2 << 30, OOMs: 1, Devices: 2, Size: 1 << 20, Read: 1 << 20},
		{Index: 1, Rank: 1, Label: "rank 1", File: "job/rank1.pickle", State: "running", Read: 1 << 20, Size: 4 << 20},
		{Index: 2, Rank: 2, Label: "rank 2", File: "job/rank2.pickle", State: "failed", Error: "job/rank2.pickle is empty"},
		{Index: 3, Rank: -1, Label: "file 4", File: "extra.pickle", State: "queued"},
	}
	h := RankTable(rows, bytesize.Binary)
	if checkMarkup(t, "table of ranks", h, "table", "caption", "thead", "tbody", "tr", "th", "td", "button", "br", "strong", "span") != 0 {
		t.Error("a hand-made row holds the hostile marker")
	}
	for _, want := range []string{
		`data-index="0" data-rank="0" data-state="done" data-outlier="true" data-peak-allocated="49392123904" data-peak-reserved="53687091200"`,
		`<button type="button" class="snap-rank-open" data-index="0" title="Open rank 0 in the full view">rank 0</button>`,
		`<td class="num" title="49,392,123,904 B">46.00 GiB</td>`,
		`outlier: peak allocated 6.00 GiB above the median 40.00 GiB`, `2 devices: the highest peaks`,
		`reading… 1.00 MiB of 4.00 MiB`, `class="error snap-rank-error">job/rank2.pickle is empty</td>`,
		`data-rank="-1" data-state="queued" data-outlier="false"><th scope="row">file 4</th>`,
	} {
		if !strings.Contains(h, want) {
			t.Errorf("the table lacks %s", want)
		}
	}
	if strings.Count(h, "snap-rank-open") != 1 || strings.Count(h, "data-peak-allocated") != 1 {
		t.Error("a rank not analysed has an open button or peaks")
	}
	golden(t, "ranktable.html", h)
	// The page writes the rows one by one into the empty table's body.
	empty, tail := RankTable(nil, bytesize.Binary), "</tbody></table>"
	if !strings.HasSuffix(empty, tail) {
		t.Fatalf("the empty table does not end with its empty body: %q", empty)
	}
	var rowsHTML string
	for _, r := range rows {
		row := RankRowHTML(r, bytesize.Binary)
		if !strings.HasPrefix(row, "<tr ") || !strings.HasSuffix(row, "</tr>") || strings.Count(row, "<tr ") != 1 {
			t.Errorf("RankRowHTML is not one row: %q", row)
		}
		rowsHTML += row
	}
	if got := strings.TrimSuffix(empty, tail) + rowsHTML + tail; got != h {
		t.Errorf("the empty table with RankRowHTML's rows is not RankTable:\n%s\n%s", got, h)
	}

	var bad []RankRow
	for k, n := range hostile.Names() {
		bad = append(bad, RankRow{Index: k, Rank: -1, Label: "file", File: n.Text, State: []string{"done", "failed"}[k%2],
			Error: n.Text, Outlier: true, Why: []string{n.Text}})
	}
	if checkMarkup(t, "table of hostile ranks", RankTable(bad, bytesize.Decimal), "table", "caption", "thead", "tbody", "tr", "th",
		"td", "button", "br", "strong", "span") == 0 {
		t.Error("no row shows a hostile name: the test does not test")
	}
}

// TestRankRowEqual changes each field of a row in turn (every field the
// struct has, found by reflection, so that a field added later is
// covered): Equal must tell each change, and hold for a copy.
func TestRankRowEqual(t *testing.T) {
	base := RankRow{Index: 1, Rank: 2, Label: "rank 2", File: "r2.pickle", State: "done", Outlier: true, Why: []string{"a", "b"},
		Error: "e", Read: 5, Size: 6, Alloc: 7, Res: 8, FinalAlloc: 9, FinalRes: 10, OOMs: 11, Devices: 12}
	cp := base
	cp.Why = slices.Clone(base.Why)
	if !base.Equal(cp) {
		t.Fatal("a copy is not Equal")
	}
	rt := reflect.TypeOf(base)
	for i := range rt.NumField() {
		o := base
		o.Why = slices.Clone(base.Why)
		f := reflect.ValueOf(&o).Elem().Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(f.Int() + 100)
		case reflect.String:
			f.SetString(f.String() + "x")
		case reflect.Bool:
			f.SetBool(!f.Bool())
		case reflect.Slice:
			f.Index(1).SetString("c")
		default:
			t.Fatalf("field %s: kind %s not covered by this test", rt.Field(i).Name, f.Kind())
		}
		if base.Equal(o) || o.Equal(base) {
			t.Errorf("a row with another %s is Equal", rt.Field(i).Name)
		}
	}
}
