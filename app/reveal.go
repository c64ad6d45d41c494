package app

import "github.com/maxence-charriere/go-app/v10/pkg/app"

// narrowScreen is the width under which a page's answer sits below its
// inputs instead of beside them (the same breakpoint as the CSS).
const narrowScreen = "(max-width: 720px)"

// revealOnNarrow scrolls the element with the given id to the top of the
// screen after the next render, on narrow screens only and only when its
// top is not already in the upper part of the screen: after a paste, a drop
// or an example, the answer is then what the user sees. On wide screens the
// answer sits beside or just under the inputs and nothing moves.
func revealOnNarrow(ctx app.Context, id string) {
	ctx.Defer(func(app.Context) { revealNow(id) })
}

// revealNow scrolls the element with the given id as revealOnNarrow says,
// now.
func revealNow(id string) {
	w := app.Window()
	if !w.Call("matchMedia", narrowScreen).Get("matches").Bool() {
		return
	}
	el := w.GetElementByID(id)
	if !el.Truthy() {
		return
	}
	top := el.Call("getBoundingClientRect").Get("top").Float()
	if top >= 0 && top < 0.5*w.Get("innerHeight").Float() {
		return
	}
	opts := map[string]any{"block": "start"}
	if !w.Call("matchMedia", "(prefers-reduced-motion: reduce)").Get("matches").Bool() {
		opts["behavior"] = "smooth"
	}
	el.Call("scrollIntoView", opts)
}
