package diagchart

// Node is one frame of a weighted tree given in pre-order, each node after
// its parent (analysis.FlameNode has this shape).
type Node struct {
	Name   string
	Parent int // -1 for the root
	Weight float64
}

// Cell is one laid-out node of an icicle: a row per depth, the width of
// each cell its share of the root's weight, children left to right in the
// order given, starting at their parent's left edge.
type Cell struct {
	// Node indexes the input.
	Node int
	// Depth is the row; X and W are fractions of the width (0…1).
	Depth int
	X, W  float64
	// Name is the node's name, Share its weight over the root's.
	Name  string
	Share float64
}

// Icicle lays out the tree, keeping cells at least minW wide and at most
// maxDepth rows deep (children of dropped cells are dropped too).
func Icicle(nodes []Node, minW float64, maxDepth int) []Cell {
	if len(nodes) == 0 || nodes[0].Weight <= 0 {
		return nil
	}
	total := nodes[0].Weight
	x := make([]float64, len(nodes))    // left edge of each node
	next := make([]float64, len(nodes)) // where each node's next child goes
	depth := make([]int, len(nodes))
	kept := make([]bool, len(nodes))
	var out []Cell
	for i, n := range nodes {
		w := n.Weight / total
		if i > 0 {
			p := n.Parent
			if p < 0 || p >= i || !kept[p] {
				continue
			}
			x[i] = next[p]
			next[p] += w
			depth[i] = depth[p] + 1
		}
		next[i] = x[i]
		if w < minW || depth[i] >= maxDepth {
			continue
		}
		kept[i] = true
		out = append(out, Cell{Node: i, Depth: depth[i], X: x[i], W: w, Name: n.Name, Share: w})
	}
	return out
}
