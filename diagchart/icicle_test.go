package diagchart

import (
	"math"
	"testing"
)

// TestIcicle checks that children sit inside their parent, left to right,
// that widths are shares of the root, and that narrow or deep cells and
// their children are left out.
func TestIcicle(t *testing.T) {
	nodes := []Node{
		{"all", -1, 100},
		{"main", 0, 90},
		{"train <script>", 1, 60},
		{"eval", 1, 25},
		{"tiny", 1, 0.5},
		{"under tiny", 4, 0.5},
		{"loader", 0, 10},
	}
	cells := Icicle(nodes, 0.01, 3)
	byNode := map[int]Cell{}
	for _, c := range cells {
		byNode[c.Node] = c
	}
	if _, ok := byNode[4]; ok {
		t.Error("a cell narrower than minW was kept")
	}
	if _, ok := byNode[5]; ok {
		t.Error("the child of a dropped cell was kept")
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	want := map[int][3]float64{0: {0, 0, 1}, 1: {1, 0, 0.9}, 2: {2, 0, 0.6}, 3: {2, 0.6, 0.25}, 6: {1, 0.9, 0.1}}
	for i, w := range want {
		c, ok := byNode[i]
		if !ok || c.Depth != int(w[0]) || !near(c.X, w[1]) || !near(c.W, w[2]) {
			t.Errorf("node %d: %+v, want depth %g x %g w %g", i, c, w[0], w[1], w[2])
		}
	}
	if byNode[2].Name != "train <script>" {
		t.Error("names must pass through unchanged (the page escapes them)")
	}
	if got := Icicle(nodes, 0.01, 2); len(got) != 3 {
		t.Errorf("maxDepth 2 kept %d cells, want the root, main and loader", len(got))
	}
	if Icicle(nil, 0, 5) != nil {
		t.Error("no nodes, cells")
	}
}
