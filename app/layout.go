package app

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/maxence-charriere/go-app/v10/pkg/app"
)

// PrivacyLine is the promise shown in every page's footer.
const PrivacyLine = "Nothing you paste or drop leaves this page: all analysis runs in your browser."

// Version is the version of the site being shown: the hash of what is
// served (GOAPP_VERSION, set by the generator).
func Version() string {
	if v := app.Getenv("GOAPP_VERSION"); v != "" {
		return v
	}
	return "dev"
}

// Label is an optional human build label (OOMSCOPE_LABEL, set by the
// generator), e.g. a release name or a git describe.
func Label() string { return app.Getenv("OOMSCOPE_LABEL") }

// Layout wraps a tool page's body in the shared header, navigation and
// footer. active is the path of the page being shown.
func Layout(active string, body ...app.UI) app.UI {
	return layout(active, false, body)
}

// StaticLayout is Layout for a static page (Route.Static): the page is
// marked with data-static-page, so that app.js does not load the wasm app
// on it, and it has no browser-side chrome.
func StaticLayout(active string, body ...app.UI) app.UI {
	return layout(active, true, body)
}

func layout(active string, static bool, body []app.UI) app.UI {
	var nav []app.UI
	for _, r := range navRoutes() {
		a := app.A().Href(Href(r.Path)).Text(r.Title)
		if r.Path == active || (r.Path == GuidesPath && strings.HasPrefix(active, GuidesPath+"/")) {
			a = a.Class("active").Aria("current", "page")
		}
		nav = append(nav, app.Li().Body(a))
	}
	ver := Version()
	if l := Label(); l != "" {
		ver = l + " · " + ver
	}
	var live app.UI = &chrome{}
	if static {
		live = app.Div().Class("update-slot")
	}
	site := app.Div().Class("site")
	if static {
		site = site.DataSet("static-page", "true")
	}
	return site.Body(
		app.A().Class("skip").Href("#main").Text("Skip to content"),
		app.Header().Class("site-header").Body(
			app.A().Class("brand").Href(Href("/")).Body(
				// The link's name is the logo's alt text; the word next to
				// it is the same name, hidden from screen readers.
				app.Img().Src("/web/icon.svg").Alt("OOMScope").Width(28).Height(28),
				app.Span().Aria("hidden", "true").Text("OOMScope"),
			),
			app.Nav().Aria("label", "Main").Body(app.Ul().Body(nav...)),
			app.Button().ID("theme-toggle").Class("theme-toggle").Type("button").
				Title("Colour theme: follow the system, dark or light").
				Body(app.Span().Class("theme-icon").Aria("hidden", "true"), app.Span().Class("theme-label").Text("Theme")),
		),
		live,
		app.Main().ID("main").Body(append([]app.UI{
			// Shown only in embed mode; site.js points it at the current
			// state without embed=1.
			app.A().ID("open-full").Class("open-full").Href(Asset(active)).Target("_blank").Rel("noopener").
				Text("Open the full page ↗"),
		}, body...)...),
		app.Footer().Class("site-footer").Body(
			app.P().Class("privacy").Text(PrivacyLine),
			app.P().Class("embed-row").Body(
				app.Button().ID("embed-this").Class("secondary small").Type("button").Text("Embed this page"),
				app.Span().ID("embed-status").Class("embed-status").Aria("live", "polite"),
			),
			app.Div().ID("embed-panel").Class("embed-panel").Hidden(true).Body(
				app.Label().For("embed-code").Text("Paste this into your documentation: it shows this page with its current settings."),
				app.Textarea().ID("embed-code").ReadOnly(true).Rows(3).Spellcheck(false),
			),
			app.P().Body(
				app.Span().Text("Version "),
				app.Code().ID("site-version").Text(ver),
				app.Text(" · works offline once loaded · "),
				app.A().Href(Href(GuidesPath)).Text("Guides"),
			),
		),
	)
}

// chrome is the part of the layout that lives in the browser: it marks the
// page ready for tests, checks for new deployments and offers the reload.
type chrome struct {
	app.Compo
	updateAvailable bool
}

// OnMount marks the page as ready and starts watching for new deployments.
func (c *chrome) OnMount(ctx app.Context) {
	// The page now shows the URL's state (see static/web/theme.js).
	app.Window().Get("document").Get("documentElement").Get("classList").Call("remove", "state-pending")
	MarkBody("data-wasm-ready", fmt.Sprintf("%.0f", app.Window().Get("performance").Call("now").Float()))
	// go-app's own OnAppUpdate is not used: it also fires on the very
	// first install, because the worker claims the page before go-app's
	// "activated" check runs. newVersionActive compares versions instead.
	check := func() {
		newVersionActive(controllerChanged, func(yes bool) {
			if yes {
				ctx.Dispatch(func(ctx app.Context) { c.setUpdateAvailable() })
			}
		})
	}
	onWorkerChange = check
	check()
	watchWorker.Do(func() {
		sw := app.Window().Get("navigator").Get("serviceWorker")
		if !sw.Truthy() {
			return
		}
		// Fires when a new version's worker takes over this page.
		sw.Call("addEventListener", "controllerchange", app.FuncOf(func(app.Value, []app.Value) any {
			controllerChanged = true
			if onWorkerChange != nil {
				onWorkerChange()
			}
			return nil
		}))
		// Long-lived tabs (an installed PWA) look for a new deploy every
		// 30 minutes; the browser itself checks on every navigation.
		go func() {
			for {
				time.Sleep(30 * time.Minute)
				checkForUpdate()
			}
		}()
	})
}

var (
	// watchWorker installs the service-worker listeners once per page load,
	// not once per mounted page.
	watchWorker sync.Once
	// onWorkerChange re-checks for an update in the mounted chrome.
	onWorkerChange func()
	// controllerChanged is set once another worker took over this page.
	controllerChanged bool
)

func (c *chrome) setUpdateAvailable() {
	c.updateAvailable = true
	MarkBody("data-update-available", "true")
}

// newVersionActive reports, through done, whether the service worker now
// serves another version than the one running. A new version's worker has
// its own "app-<version>" cache; it takes over the page (controllerchange)
// when it activates, and then deletes the older caches. So another version
// is active when another "app-" cache exists and either the running
// version's cache is gone (the update finished before this page started)
// or the controller changed since the page loaded. The first install has
// only the running version's cache.
func newVersionActive(controllerChanged bool, done func(bool)) {
	caches := app.Window().Get("caches")
	if !caches.Truthy() {
		return
	}
	own := "app-" + Version()
	var ok, fail app.Func
	release := func() { ok.Release(); fail.Release() }
	ok = app.FuncOf(func(_ app.Value, args []app.Value) any {
		defer release()
		hasOwn, hasOther := false, false
		if len(args) > 0 && args[0].Truthy() {
			for i := 0; i < args[0].Length(); i++ {
				switch k := args[0].Index(i).String(); {
				case k == own:
					hasOwn = true
				case strings.HasPrefix(k, "app-"):
					hasOther = true
				}
			}
		}
		done(hasOther && (!hasOwn || controllerChanged))
		return nil
	})
	fail = app.FuncOf(func(app.Value, []app.Value) any { release(); return nil })
	caches.Call("keys").Call("then", ok, fail)
}

// checkForUpdate asks the service worker registration to look for a new
// version, ignoring failures (offline is normal for this app). go-app's
// app.TryUpdate leaves the promise's rejection unhandled.
func checkForUpdate() {
	sw := app.Window().Get("navigator").Get("serviceWorker")
	if !sw.Truthy() {
		return
	}
	var then, ignore app.Func
	ignore = app.FuncOf(func(app.Value, []app.Value) any { return nil })
	then = app.FuncOf(func(_ app.Value, args []app.Value) any {
		if len(args) > 0 && args[0].Truthy() {
			args[0].Call("update").Call("catch", ignore)
		}
		return nil
	})
	sw.Call("getRegistration").Call("then", then, ignore)
}

func (c *chrome) Render() app.UI {
	if !c.updateAvailable {
		return app.Div().Class("update-slot")
	}
	return app.Div().Class("update-slot").Body(
		app.Div().ID("update-banner").Class("update-banner").Aria("live", "polite").Body(
			app.Span().Text("A new version of OOMScope is available. "),
			app.Button().ID("update-reload").Text("Reload").OnClick(func(ctx app.Context, e app.Event) {
				ctx.Reload()
			}),
		),
	)
}
