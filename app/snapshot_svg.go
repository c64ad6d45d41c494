package app

import (
	"sync"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// The timeline's drawings (chart.Timeline's SVG and ShadesSVG: 150-220 KB
// of paths on the 55 and 200 MB distinct-stacks files, 70 KB of shades)
// are parsed ahead, in the browser task that lays them out, and the frame
// that shows them only moves the parsed elements into the page: mounted as
// go-app raw HTML, their parsing (the Go string copied to JavaScript, then
// the HTML parser, 4-9 ms of CPU) was part of the result's frame and of
// the shades' frame, the page's longest tasks after a drop.

// svgNS is the SVG namespace.
const svgNS = "http://www.w3.org/2000/svg"

// maxParsedSVG is how many drawings parsed ahead wait for their frame (the
// timeline and its shades).
const maxParsedSVG = 2

// parsedSVGs are the drawings parsed ahead (preparseSVG), oldest first,
// each taken by the first svgDrawing that shows it.
var parsedSVGs struct {
	sync.Mutex
	list []parsedSVG
}

// parsedSVG is a drawing's markup and its <svg> element, parsed and not in
// the page.
type parsedSVG struct {
	svg string
	el  app.Value
}

// preparseSVG parses svg (markup with one <svg> root, as package chart
// writes it) now, in the calling goroutine's browser task, for the
// svgDrawing that will show it.
func preparseSVG(svg string) {
	if !app.IsClient || svg == "" {
		return
	}
	el := parseSVG(svg)
	s := &parsedSVGs
	s.Lock()
	defer s.Unlock()
	if len(s.list) == maxParsedSVG {
		s.list = s.list[1:]
	}
	s.list = append(s.list, parsedSVG{svg: svg, el: el})
}

// takeParsedSVG returns the element parsed ahead for svg and forgets it;
// nil if there is none.
func takeParsedSVG(svg string) app.Value {
	s := &parsedSVGs
	s.Lock()
	defer s.Unlock()
	for i, p := range s.list {
		if p.svg == svg {
			s.list = append(s.list[:i], s.list[i+1:]...)
			return p.el
		}
	}
	return nil
}

// parseSVG parses svg into an element outside the page, as go-app parses
// raw HTML (the HTML parser of a detached <div>).
func parseSVG(svg string) app.Value {
	box := app.Window().Get("document").Call("createElement", "div")
	box.Set("innerHTML", svg)
	return box.Get("firstElementChild")
}

// svgDrawing shows SVG markup (one <svg> root) as go-app's raw HTML
// would, with the same element and attributes, but from the element
// parsed ahead for it when there is one (preparseSVG). go-app draws an
// empty <svg> and never touches its attributes or children; the markup's
// are put on it when it is mounted and when its markup changes.
type svgDrawing struct {
	app.Compo
	SVG string
}

// Render draws the empty <svg> that the markup fills (fill).
func (s *svgDrawing) Render() app.UI { return app.Elem("svg").XMLNS(svgNS) }

// OnMount fills the element with its markup.
func (s *svgDrawing) OnMount(ctx app.Context) { s.fill() }

// OnUpdate fills the element with its new markup.
func (s *svgDrawing) OnUpdate(ctx app.Context) { s.fill() }

// fill gives the element the attributes and children of the markup's
// root, parsed ahead or now.
func (s *svgDrawing) fill() {
	dst := s.JSValue()
	if dst == nil || !dst.Truthy() {
		return
	}
	src := takeParsedSVG(s.SVG)
	if src == nil || !src.Truthy() {
		src = parseSVG(s.SVG)
	}
	for attrs := dst.Get("attributes"); attrs.Length() > 0; {
		dst.Call("removeAttribute", attrs.Index(0).Get("name"))
	}
	dst.Call("replaceChildren")
	if src == nil || !src.Truthy() {
		return
	}
	attrs := src.Get("attributes")
	for i := 0; i < attrs.Length(); i++ {
		a := attrs.Index(i)
		dst.Call("setAttributeNS", a.Get("namespaceURI"), a.Get("name"), a.Get("value"))
	}
	r := app.Window().Get("document").Call("createRange")
	r.Call("selectNodeContents", src)
	dst.Call("append", r.Call("extractContents"))
}
