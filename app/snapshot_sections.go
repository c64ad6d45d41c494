package app

import (
	"github.com/maxence-charriere/go-app/v10/pkg/app"

	"oomscope/bytesize"
	"oomscope/snapshot/analysis"
	"oomscope/snapshot/chart"
)

// sectionKind names a section of a file's result that is drawn as a
// component of its own (resultSection).
type sectionKind int

const (
	secDiagnosis sectionKind = iota
	secBuckets
	secSites
	secSteps
	secOOMs
	secAnomalies
	secSetup
	secWarnings
	secExplain
)

// resultSection is one section of a file's result as a component of its
// own: go-app draws it again only when one of its fields changes (the
// device, the unit, the model picked for the estimator link), not on every
// update of the page. The page updates for each section revealed, each
// allocator state asked for, each copy of the report; drawing the whole
// result again each time (the sites' stacks, the step chart, the icicle,
// the catalog's model list) made main-thread tasks of hundreds of
// milliseconds.
type resultSection struct {
	app.Compo
	Page *SnapshotPage
	Kind sectionKind
	Dev  *analysis.DeviceReport
	Unit bytesize.Unit
	// Model is the page's setupModel, which the setup section shows.
	Model string
	// Fixes says whether the diagnosis shows its fixes yet (fixesStage);
	// MoreFixes whether its folded fixes are in their list yet
	// (moreFixesStage).
	Fixes, MoreFixes bool
	// StepTable says whether the steps section lists its steps yet
	// (stepTableStage).
	StepTable bool
	// Diagnosing says that the diagnosis is not known yet (the page's
	// diagnosing): the answer says so.
	Diagnosing bool
}

// Render draws the section from the page's state.
func (s *resultSection) Render() app.UI {
	p, d := s.Page, s.Dev
	switch s.Kind {
	case secDiagnosis:
		if s.Diagnosing {
			return renderDiagnosing()
		}
		return p.renderDiagnosis(d, s.Fixes, s.MoreFixes)
	case secBuckets:
		return p.renderBuckets(d)
	case secSites:
		return p.renderSites(d)
	case secSteps:
		return p.renderSteps(d, s.StepTable)
	case secOOMs:
		return p.renderOOMs(d)
	case secAnomalies:
		return p.renderAnomalies(d)
	case secSetup:
		return p.renderSetup(d)
	case secWarnings:
		return p.renderWarnings(d)
	case secExplain:
		return p.renderExplain()
	}
	return app.Text("")
}

// section returns the component of one section of device d's result.
func (p *SnapshotPage) section(k sectionKind, d *analysis.DeviceReport) app.UI {
	s := &resultSection{Page: p, Kind: k, Dev: d, Unit: p.unit}
	switch k {
	case secSetup:
		s.Model = p.setupModel
	case secSteps:
		s.StepTable = p.reveal >= stepTableStage
	case secDiagnosis:
		// Before the result (d nil: its skeleton), "Diagnosing…" too.
		s.Fixes, s.MoreFixes, s.Diagnosing = p.reveal >= fixesStage, p.reveal >= moreFixesStage, p.diagnosing || d == nil
	}
	return s
}

// stateSection is the allocator state section as a component of its own:
// go-app draws it again only when the state shown, its error, the entry
// asked for, the device or the unit changes. Drawn with the page, it
// rebuilt the segments' SVG on every update of the page (a quarter of the
// page's rendering time on a 55 MB file, by Chromium's profile).
type stateSection struct {
	app.Compo
	Page  *SnapshotPage
	Dev   *analysis.DeviceReport
	Unit  bytesize.Unit
	State *analysis.State
	Err   string
	Index int
}

// Render draws the section from the page's state.
func (s *stateSection) Render() app.UI { return s.Page.renderState(s.Dev) }

// stateView returns the allocator state section of device d.
func (p *SnapshotPage) stateView(d *analysis.DeviceReport) app.UI {
	return &stateSection{Page: p, Dev: d, Unit: p.unit, State: p.state, Err: p.stateErr, Index: p.stateIndex}
}

// timelineSection is the timeline as a component of its own: go-app draws
// it again only when the chart (a new one for each zoom, device and unit),
// the moment selected or the zoom changes. Drawn with the page, its overlay,
// axis and legend were built again at every stage of the result's reveal,
// and their garbage brought the page's collections into those stages.
type timelineSection struct {
	app.Compo
	Page  *SnapshotPage
	Dev   *analysis.DeviceReport
	Chart *chart.Timeline
	// Sel is the entry of the allocator state shown, -1 if none.
	Sel    int
	Zoomed bool
}

// Render draws the timeline from the page's state.
func (s *timelineSection) Render() app.UI { return s.Page.renderTimeline(s.Dev) }

// timelineView returns the timeline section of device d.
func (p *SnapshotPage) timelineView(d *analysis.DeviceReport) app.UI {
	sel := -1
	if p.state != nil {
		sel = p.state.Index
	}
	return &timelineSection{Page: p, Dev: d, Chart: p.chart, Sel: sel, Zoomed: p.zoom != nil}
}
