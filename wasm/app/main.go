// Command app is OOMScope's web application, compiled to WebAssembly
// (GOOS=js GOARCH=wasm) and loaded by the static site's app.js.
package main

import (
	"runtime/debug"

	"github.com/maxence-charriere/go-app/v10/pkg/app"

	ui "oomscope/app"
)

func main() {
	// The page's live heap is a few megabytes (5 MB with a 55 MB
	// snapshot's result shown), but each collection costs its main thread
	// 25-35 ms, most of it fixed (roots, stacks, the runtime built without
	// inlining): at the default 100 one ran every few megabytes allocated,
	// within the frames that show a result, and made its longest tasks.
	// At 400 (a heap goal of at least 16 MB) the whole result is shown
	// before the first one.
	debug.SetGCPercent(400)
	ui.Register()
	app.RunWhenOnBrowser()
}
