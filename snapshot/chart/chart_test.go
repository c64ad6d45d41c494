package chart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"oomscope/bytesize"
	"oomscope/internal/goldenfile"
	"oomscope/snapshot/analysis"
	"oomscope/untrusted/hostile"
)

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), []byte(got))
}

// small is a hand-made timeline: entries 10…50, two site bands and
// "other", reserved above allocated, peak at entry 30.
func small() *Timeline {
	pts := []analysis.Point{
		{Index: 10, TimeUS: 1_000_000, Allocated: 100, Reserved: 200},
		{Index: 20, TimeUS: 1_500_000, Allocated: 300, Reserved: 400},
		{Index: 30, TimeUS: 2_000_000, Allocated: 900, Reserved: 950},
		{Index: 50, TimeUS: 3_000_000, Allocated: 400, Reserved: 950},
	}
	bands := &analysis.SiteSeries{
		Sites:     []string{"model.py:10 forward", "optim.py:5 step", "other sites"},
		SiteIndex: []int32{4, 7, -1},
		Values:    [][]int64{{50, 200, 600, 100}, {0, 100, 200, 200}, {50, 0, 100, 100}},
	}
	return NewTimeline(pts, bands, withBands(Options{Unit: bytesize.Binary, Peak: 30},
		[]band{{10, 25, "snap-step", "step 1"}, {26, 50, "snap-step snap-odd", "step 2"}}))
}

// band is a shade with its class and tooltip (withBands).
type band struct {
	from, to     int
	class, label string
}

// withBands returns o drawing bs as its shades.
func withBands(o Options, bs []band) Options {
	o.Shades = make([]Shade, len(bs))
	for k, b := range bs {
		o.Shades[k] = Shade{From: b.from, To: b.to}
	}
	o.ShadeClass = func(k int) string { return bs[k].class }
	o.ShadeLabel = func(k int) string { return bs[k].label }
	return o
}

func TestTimelineGeometry(t *testing.T) {
	c := small()
	// 950 B × 1.05 = 997.5 B → five steps of 200 B to 1000 B.
	if c.Top != 1000 || len(c.Ticks) != 6 || c.Ticks[1].Label != "200 B" || c.Ticks[4].Y != 0.2 {
		t.Fatalf("top %d, ticks %+v", c.Top, c.Ticks)
	}
	for _, tt := range []struct {
		idx int
		x   float64
	}{{10, 0}, {30, 0.5}, {50, 1}} {
		if got := c.X(tt.idx); got != tt.x {
			t.Errorf("X(%d) = %v, want %v", tt.idx, got, tt.x)
		}
	}
	if y := c.Y(250); y != 0.75 {
		t.Errorf("Y(250) = %v", y)
	}
	if i := c.IndexAt(0.26); i != 20 {
		t.Errorf("IndexAt(0.26) = %d", i)
	}
	if b := c.BytesAt(0.5); b != 500 {
		t.Errorf("BytesAt(0.5) = %d", b)
	}
	for idx, want := range map[int]int{0: 0, 14: 0, 16: 1, 26: 2, 39: 2, 41: 3, 99: 3} {
		if got := c.Nearest(idx); got != want {
			t.Errorf("Nearest(%d) = %d, want %d", idx, got, want)
		}
	}
	// At entry 30 the bands stack 600, 200, 100 from the bottom.
	for v, want := range map[int64]int{1: 0, 600: 0, 601: 1, 800: 1, 850: 2, 901: -1} {
		if got := c.BandAt(2, v); got != want {
			t.Errorf("BandAt(2, %d) = %d, want %d", v, got, want)
		}
	}
	if l := c.XLabel(30, 1_000_000); l != "entry 30 · 1.000 s" {
		t.Errorf("XLabel = %q", l)
	}
	if l := c.XLabel(-1, 0); l != "before the trace" {
		t.Errorf("XLabel(-1) = %q", l)
	}
	if BandClass(2, 3) != 99 || BandClass(12, 20) != 2 {
		t.Errorf("BandClass")
	}
	if NewTimeline(nil, c.Bands, Options{}) != nil {
		t.Errorf("a timeline without points is drawn")
	}
	golden(t, "small.svg", c.SVG)
	golden(t, "small_shades.svg", c.ShadesSVG)
}

// hostileDevice analyses hostile.Snapshot for the page: every site, stack
// line and block carries every attack of hostile.Names.
func hostileDevice(t *testing.T) (*analysis.Analysis, *analysis.DeviceReport) {
	t.Helper()
	s, _, err := hostile.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	an := analysis.Analyze(s, analysis.Options{TimelinePoints: 40, SeriesSites: 4, TopSites: 6})
	r := an.Report()
	d := &r.Devices[0]
	n := 0
	for _, site := range d.SiteSeries.Sites {
		if strings.Contains(site, "PWN") {
			n++
		}
	}
	if n < 2 {
		t.Fatalf("only %d bands carry a hostile name: the test does not test", n)
	}
	return an, d
}

// checkMarkup parses s as XML (the SVG and HTML the chart writes is
// well-formed XML) and fails on any element outside allowed, any attribute
// that is an event handler, a link or a style outside the chart's own, and
// control characters in its text. It returns how many of its texts hold
// the marker of hostile.Names, "PWN".
func checkMarkup(t *testing.T, what, s string, allowed ...string) int {
	t.Helper()
	ok := map[string]bool{"root": true}
	for _, a := range allowed {
		ok[a] = true
	}
	dec := xml.NewDecoder(strings.NewReader("<root>" + s + "</root>"))
	dec.Strict = true
	dec.Entity = map[string]string{}
	texts := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed: %v\n%.500s", what, err, s)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if !ok[e.Name.Local] {
				t.Errorf("%s: element <%s>", what, e.Name.Local)
			}
			for _, a := range e.Attr {
				n := strings.ToLower(a.Name.Local)
				if strings.HasPrefix(n, "on") || n == "href" || n == "src" ||
					n == "style" && strings.ContainsAny(a.Value, "\"<>()") {
					t.Errorf("%s: attribute %s=%q on <%s>", what, a.Name.Local, a.Value, e.Name.Local)
				}
			}
		case xml.CharData:
			if strings.Contains(string(e), "PWN") {
				texts++
			}
			for _, r := range string(e) {
				if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x202a && r <= 0x202e {
					t.Errorf("%s: text holds %U", what, r)
				}
			}
		}
	}
	return texts
}

// TestHostileTimeline draws the timeline, its tooltips and shades whose
// labels are hostile names, and the allocator's segments with hostile
// block sites: each is well-formed, holds only the chart's own elements
// and attributes, and shows the names as text. Goldens show the escaping.
func TestHostileTimeline(t *testing.T) {
	an, d := hostileDevice(t)
	shades := []band{{0, d.Entries / 2, `snap-step" onload="alert(1)`, hostile.Names()[0].Text}}
	for _, n := range hostile.Names()[1:6] {
		shades = append(shades, band{d.Entries / 2, d.Entries - 1, "snap-phase", n.Text})
	}
	c := NewTimeline(d.Timeline, d.SiteSeries, withBands(Options{Unit: bytesize.Binary, Peak: d.PeakIndex}, shades))
	checkMarkup(t, "timeline SVG", c.SVG, "svg", "line", "path")
	if checkMarkup(t, "shades SVG", c.ShadesSVG, "svg", "rect", "title") == 0 {
		t.Errorf("the shades show no hostile label: the test does not test")
	}
	golden(t, "hostile_timeline.svg", c.SVG)
	golden(t, "hostile_shades.svg", c.ShadesSVG)

	var tips strings.Builder
	shown := 0
	for j := range c.Points {
		if j%9 != 0 && j != c.Nearest(d.PeakIndex) {
			continue
		}
		for k := range c.Bands.Sites {
			tip := c.TipHTML(d, j, k, bytesize.Binary)
			shown += checkMarkup(t, "tooltip", tip, "div", "strong", "ul", "li", "span", "pre")
			if k == 0 {
				tips.WriteString(tip + "\n")
			}
		}
	}
	if shown == 0 {
		t.Errorf("no tooltip shows a hostile name: the test does not test")
	}
	golden(t, "hostile_tips.html", tips.String())

	st := an.Device(d.Device).StateAt(d.PeakIndex, 8, 5)
	svg := SegmentsSVG(&st, bytesize.Decimal)
	if checkMarkup(t, "segments SVG", svg, "svg", "g", "title", "rect") == 0 {
		t.Errorf("no block shows a hostile site: the test does not test")
	}
	golden(t, "hostile_segments.svg", svg)
}

// TestSegmentsOddSizes: segments of size 0 or negative sizes (a corrupt
// file) draw within the row instead of as NaN or negative widths.
func TestSegmentsOddSizes(t *testing.T) {
	st := &analysis.State{Segments: []analysis.SegmentState{
		{Address: "0x0", Size: 0, Blocks: []analysis.BlockView{{Offset: 0, Size: -5, Requested: -5, Category: "activation"}}},
		{Address: "0x1", Size: -100},
	}}
	svg := SegmentsSVG(st, bytesize.Binary)
	if strings.Contains(svg, "NaN") || strings.Contains(svg, `width="-`) || strings.Contains(svg, `x="-`) {
		t.Errorf("odd sizes draw badly: %s", svg)
	}
}

// TestShadesTooNarrow: a shade under minShade drawing units is counted,
// not drawn, so a trace of thousands of steps does not put thousands of
// invisible rectangles on the page; zoomed in, the same shades are drawn.
func TestShadesTooNarrow(t *testing.T) {
	line := func(last int) ([]analysis.Point, *analysis.SiteSeries) {
		pts := []analysis.Point{{Index: 0, Allocated: 10, Reserved: 20}, {Index: last, Allocated: 10, Reserved: 20}}
		return pts, &analysis.SiteSeries{Sites: []string{"other sites"}, SiteIndex: []int32{-1}, Values: [][]int64{{10, 10}}}
	}
	var shades []Shade
	for i := range 20_000 {
		shades = append(shades, Shade{From: i, To: i})
	}
	// 20,000 one-entry shades over 100,000 entries: 0.1 units each.
	shades = append(shades, Shade{From: 50_000, To: 100_000})
	pts, bands := line(100_000)
	c := NewTimeline(pts, bands, Options{Unit: bytesize.Binary, Shades: shades})
	if c.HiddenShades != 20_000 {
		t.Errorf("%d hidden shades, want 20000", c.HiddenShades)
	}
	if n := strings.Count(c.ShadesSVG, `class="snap-shade`); n != 1 {
		t.Errorf("%d shades drawn, want the wide one alone", n)
	}
	// Over 100 entries a two-entry shade is 100 units wide: drawn, but for
	// the one that starts at the last entry, cut to 0 units.
	for i := range shades[:20_000] {
		shades[i].To = shades[i].From + 1
	}
	pts, bands = line(100)
	c = NewTimeline(pts, bands, Options{Unit: bytesize.Binary, Shades: shades})
	if c.HiddenShades != 1 {
		t.Errorf("zoomed in: %d hidden shades, want 1", c.HiddenShades)
	}
	if n := strings.Count(c.ShadesSVG, `class="snap-shade`); n != 100 {
		t.Errorf("zoomed in: %d shades drawn, want 100", n)
	}
}

// TestShadeLabelOnlyDrawn: Options.ShadeClass and ShadeLabel are asked
// for each drawn shade, by its index, and for no hidden one.
func TestShadeLabelOnlyDrawn(t *testing.T) {
	pts := []analysis.Point{{Index: 0, Allocated: 10, Reserved: 20}, {Index: 100_000, Allocated: 10, Reserved: 20}}
	bands := &analysis.SiteSeries{Sites: []string{"other sites"}, SiteIndex: []int32{-1}, Values: [][]int64{{10, 10}}}
	var shades []Shade
	for i := range 1000 {
		shades = append(shades, Shade{From: i, To: i})
	}
	// Two wide ones, at indices 1000 and 1001.
	shades = append(shades, Shade{From: 10_000, To: 40_000}, Shade{From: 50_000, To: 90_000})
	var asked, classed []int
	c := NewTimeline(pts, bands, Options{Unit: bytesize.Binary, Shades: shades, ShadeLabel: func(k int) string {
		asked = append(asked, k)
		return fmt.Sprintf("shade <%d>", k)
	}, ShadeClass: func(k int) string {
		classed = append(classed, k)
		return fmt.Sprintf("shade-%d", k)
	}})
	if fmt.Sprint(asked) != "[1000 1001]" || fmt.Sprint(classed) != "[1000 1001]" {
		t.Errorf("labels asked for %v, classes for %v, want [1000 1001] (the drawn shades)", asked, classed)
	}
	for _, want := range []string{"<title>shade &lt;1000&gt;</title>", "<title>shade &lt;1001&gt;</title>",
		`<rect class="snap-shade shade-1000"`, `<rect class="snap-shade shade-1001"`} {
		if !strings.Contains(c.ShadesSVG, want) {
			t.Errorf("shades SVG lacks %q", want)
		}
	}
}

// TestAppendPoint checks the hand-written number formatting against
// strconv on the edges of int64.
func TestAppendPoint(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 99, 100, 3000, 10000, -1, -10, -3001, 1 << 40, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for _, x := range vals {
		for _, y := range vals {
			got := string(appendPoint([]byte("p"), 'L', x, y))
			want := "pL" + strconv.FormatInt(x, 10) + " " + strconv.FormatInt(y, 10)
			if got != want {
				t.Errorf("appendPoint(%d, %d) = %q, want %q", x, y, got, want)
			}
		}
	}
}

// TestTimelinePaths checks every point of the bands' and the reserved
// line's paths of a large random timeline (bands of any sign, so that
// points fall off the chart) against the scale worked out here.
func TestTimelinePaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, nb = 700, 5
	pts := make([]analysis.Point, n)
	bands := zeroBands(nb, n)
	idx := 100
	for j := range pts {
		idx += 1 + rng.IntN(5000)
		var sum int64
		for k := range bands.Values {
			v := rng.Int64N(3<<30) - 1<<28
			bands.Values[k][j] = v
			sum += v
		}
		pts[j] = analysis.Point{Index: idx, Allocated: max(0, sum), Reserved: rng.Int64N(16 << 30)}
	}
	c := NewTimeline(pts, bands, Options{Unit: bytesize.Binary, Peak: -1})
	from, to, top := float64(pts[0].Index), float64(pts[n-1].Index), float64(c.Top)
	x := func(j int) string {
		return strconv.FormatInt(int64(math.Round((float64(pts[j].Index)-from)/(to-from)*10000)), 10)
	}
	y := func(v int64) string { return strconv.FormatInt(int64(math.Round((1-float64(v)/top)*3000)), 10) }
	base := make([]int64, n)
	for k := range nb {
		var want strings.Builder
		for j := range n {
			cmd := "L"
			if j == 0 {
				cmd = "M"
			}
			want.WriteString(cmd + x(j) + " " + y(base[j]+bands.Values[k][j]))
		}
		for j := n - 1; j >= 0; j-- {
			want.WriteString("L" + x(j) + " " + y(base[j]))
			base[j] += bands.Values[k][j]
		}
		want.WriteString("Z")
		if !strings.Contains(c.SVG, `d="`+want.String()+`"`) {
			t.Errorf("band %d: its path is not in the SVG", k)
		}
	}
	var want strings.Builder
	for j := range n {
		cmd := "L"
		if j == 0 {
			cmd = "M"
		}
		want.WriteString(cmd + x(j) + " " + y(pts[j].Reserved))
	}
	if !strings.Contains(c.SVG, `class="snap-reserved" vector-effect="non-scaling-stroke" d="`+want.String()+`"`) {
		t.Errorf("the reserved line's path is not in the SVG")
	}
}

// TestWithShades: shades added to a timeline drawn without them give the
// timeline drawn with them (the same drawing, shades and count of hidden
// ones), and leave the first as it was.
func TestWithShades(t *testing.T) {
	pts := []analysis.Point{{Index: 0, Allocated: 10, Reserved: 20}, {Index: 40, Allocated: 30, Reserved: 40}, {Index: 100_000, Allocated: 10, Reserved: 20}}
	bands := &analysis.SiteSeries{Sites: []string{"a", "other sites"}, SiteIndex: []int32{0, -1}, Values: [][]int64{{5, 20, 5}, {5, 10, 5}}}
	bs := []band{{0, 3, "narrow", "hidden"}, {10, 40_000, "wide", "first"}, {200_000, 300_000, "out", "out of range"}, {50_000, 99_999, "wide odd", "second"}}
	o := Options{Unit: bytesize.Binary, Peak: 40}
	plain := NewTimeline(pts, bands, o)
	if plain.ShadesSVG != "" || plain.HiddenShades != 0 {
		t.Fatalf("a timeline without shades has shades %q (%d hidden)", plain.ShadesSVG, plain.HiddenShades)
	}
	before := *plain
	want := NewTimeline(pts, bands, withBands(o, bs))
	wo := withBands(o, bs)
	got := plain.WithShades(wo.Shades, wo.ShadeClass, wo.ShadeLabel)
	if got.SVG != want.SVG || got.ShadesSVG != want.ShadesSVG || got.HiddenShades != want.HiddenShades {
		t.Errorf("with shades added: hidden %d, shades %q; drawn with them: hidden %d, shades %q (drawing equal: %v)",
			got.HiddenShades, got.ShadesSVG, want.HiddenShades, want.ShadesSVG, got.SVG == want.SVG)
	}
	if want.HiddenShades != 1 || strings.Count(want.ShadesSVG, "<rect") != 2 {
		t.Errorf("%d hidden and %d drawn, want 1 and 2: the test does not test", want.HiddenShades, strings.Count(want.ShadesSVG, "<rect"))
	}
	if plain.SVG != before.SVG || plain.ShadesSVG != "" || plain.HiddenShades != 0 {
		t.Error("adding shades changed the timeline they were added to")
	}
	if got.WithShades(nil, nil, nil).ShadesSVG != "" {
		t.Error("no shades still draw some")
	}
}

// zeroBands returns nb site bands ("site k") of n zero values each.
func zeroBands(nb, n int) *analysis.SiteSeries {
	bands := &analysis.SiteSeries{Values: make([][]int64, nb)}
	for k := range bands.Values {
		bands.Values[k] = make([]int64, n)
		bands.Sites = append(bands.Sites, fmt.Sprint("site ", k))
		bands.SiteIndex = append(bands.SiteIndex, int32(k))
	}
	return bands
}

// TestAllocatedBand: the timeline the page draws from a summary (one band,
// chart.AllocatedBand) keeps the scale, the grid, the reserved line and
// the peak line of the one drawn later with the site bands (whose columns
// add up to the allocated bytes), and its band's top is the top of their
// stack: the chart does not move when the sites come.
func TestAllocatedBand(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, nb = 500, 4
	pts := make([]analysis.Point, n)
	bands := zeroBands(nb, n)
	idx := -1
	for j := range pts {
		var sum int64
		for k := range bands.Values {
			v := rng.Int64N(5 << 30)
			bands.Values[k][j] = v
			sum += v
		}
		pts[j] = analysis.Point{Index: idx, Allocated: sum, Reserved: sum + rng.Int64N(4<<30)}
		idx += 1 + rng.IntN(300)
	}
	o := Options{Unit: bytesize.Binary, Peak: pts[n/3].Index}
	early, full := NewTimeline(pts, AllocatedBand(pts), o), NewTimeline(pts, bands, o)
	if early.Top != full.Top || fmt.Sprint(early.Ticks) != fmt.Sprint(full.Ticks) || early.From != full.From || early.To != full.To {
		t.Errorf("scale: top %d, ticks %v, entries %d…%d; with the sites %d, %v, %d…%d", early.Top, early.Ticks, early.From, early.To,
			full.Top, full.Ticks, full.From, full.To)
	}
	if len(early.Bands.Sites) != 1 || early.Bands.Sites[0] != AllocatedLabel {
		t.Errorf("bands %q, want one, %q", early.Bands.Sites, AllocatedLabel)
	}
	// Everything but the bands' paths is the same drawing.
	bandPath := regexp.MustCompile(`<path class="snap-band snap-band-\d+" d="([^"]*)"/>`)
	if a, b := bandPath.ReplaceAllString(early.SVG, ""), bandPath.ReplaceAllString(full.SVG, ""); a != b {
		t.Errorf("the drawings differ beyond their bands:\n%.300s\n%.300s", a, b)
	}
	eb, fb := bandPath.FindAllStringSubmatch(early.SVG, -1), bandPath.FindAllStringSubmatch(full.SVG, -1)
	if len(eb) != 1 || len(fb) != nb {
		t.Fatalf("%d and %d band paths, want 1 and %d", len(eb), len(fb), nb)
	}
	// A band's path is its top, left to right, then its base back: the
	// top of the one band is that of the last site band.
	top := func(d string) string { return strings.Join(strings.SplitAfter(d, "L")[:n], "") }
	if top(eb[0][1]) != top(fb[nb-1][1]) {
		t.Errorf("the allocated band's top differs from the top of the site bands' stack")
	}
	if !strings.Contains(early.SVG, `class="snap-peak-line"`) {
		t.Error("no peak line")
	}
}
