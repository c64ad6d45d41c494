package app

import (
	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// copyText puts text on the clipboard with navigator.clipboard, falling back
// to a hidden textarea and document.execCommand("copy") where the Clipboard
// API is missing or refused. done reports whether it worked; it runs on the
// UI goroutine. It cannot panic: JS exceptions become a false result.
func copyText(ctx app.Context, text string, done func(ok bool)) {
	report := func(ok bool) { ctx.Dispatch(func(app.Context) { done(ok) }) }
	defer func() {
		if r := recover(); r != nil {
			report(false)
		}
	}()
	clip := app.Window().Get("navigator").Get("clipboard")
	if !clip.Truthy() || !clip.Get("writeText").Truthy() {
		report(copyFallback(text))
		return
	}
	var ok, fail app.Func
	release := func() { ok.Release(); fail.Release() }
	ok = app.FuncOf(func(app.Value, []app.Value) any {
		release()
		report(true)
		return nil
	})
	fail = app.FuncOf(func(app.Value, []app.Value) any {
		release()
		report(copyFallback(text))
		return nil
	})
	clip.Call("writeText", text).Call("then", ok, fail)
}

// copyFallback copies through a temporary, selected textarea.
func copyFallback(text string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	doc := app.Window().Get("document")
	ta := doc.Call("createElement", "textarea")
	ta.Set("value", text)
	ta.Call("setAttribute", "readonly", "")
	ta.Get("style").Set("position", "fixed")
	ta.Get("style").Set("left", "-9999px")
	doc.Get("body").Call("appendChild", ta)
	ta.Call("select")
	ok = doc.Call("execCommand", "copy").Bool()
	doc.Get("body").Call("removeChild", ta)
	return ok
}
