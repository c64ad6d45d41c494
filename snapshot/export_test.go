package snapshot

// WithoutStackCache returns a copy of opt (nil: the defaults) that decodes
// without the stack cache, the path every frame list took before it.
func WithoutStackCache(opt *Options) *Options {
	o := Options{}
	if opt != nil {
		o = *opt
	}
	o.noStackCache = true
	return &o
}

// CountStackCacheHits returns a copy of opt (nil: the defaults) that
// stores the number of frame lists the stack cache found in *hits.
func CountStackCacheHits(opt *Options, hits *int) *Options {
	o := Options{}
	if opt != nil {
		o = *opt
	}
	o.stackCacheHits = hits
	return &o
}
