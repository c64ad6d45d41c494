// Command app is OOMScope's web application, compiled to WebAssembly
// (GOOS=js GOARCH=wasm) and loaded by the static site's app.js.
package main

import (
	"github.com/maxence-charriere/go-app/v10/pkg/app"

	ui "oomscope/app"
)

func main() {
	ui.Register()
	app.RunWhenOnBrowser()
}
