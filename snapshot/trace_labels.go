package snapshot

import "sort"

// LabelledFrom returns the first entry at or after i (0 ≤ i) that has a
// user_metadata or extra keys (UserMetadata, Extra), or Len() when none
// has. Few entries have either: a pass over entries in order asks it
// again only once past the entry it returned, where asking each entry's
// UserMetadata and Extra costs two searches an entry.
func (t Trace) LabelledFrom(i int) int {
	if t.e == nil {
		return t.n
	}
	row, end := t.start+max(i, 0), t.start+t.n
	next := end
	for _, rows := range [2][]int32{t.e.user.rows, t.e.extra.rows} {
		j := sort.Search(len(rows), func(j int) bool { return int(rows[j]) >= row })
		if j < len(rows) {
			next = min(next, int(rows[j]))
		}
	}
	return min(next, end) - t.start
}
