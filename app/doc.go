// Package app holds OOMScope's user interface: one go-app component per route,
// the shared layout, and the small helpers every page uses. It holds no
// formulas and no parsing: every number comes from the estimator, triage or
// snapshot packages.
//
// # Conventions for pages
//
//   - One route, one component, one file: the route table is in routes.go
//     (Routes); a page is a struct embedding app.Compo whose Render returns
//     Layout(path, body...). Put page-specific sub-components in files named
//     after the page (estimate_bar.go, ...).
//   - Links between pages go through Href("/estimate?x=y"), never a literal
//     "/estimate": under a sub-path build (make dist BASE=/repo/) the browser
//     needs the prefix and the generator adds it itself; in embed mode Href
//     keeps embed=1. Files (a worker script, an image) go through Asset.
//   - URL state: read the query in OnNav with Query(ctx), which drops the
//     parameters that are never state (embed, tracking: PageQuery); write it
//     back on every change with ReplaceQuery(ctx, values) so the URL always
//     restores the state (shared links, iframes with URL parameters).
//   - Content first: every page is prerendered and readable before the wasm
//     runs. Pages that need no wasm at all (guides, 404) are Route.Static,
//     use StaticLayout, and live in host-only files (guides.go), so their
//     text is not in app.wasm. static/web/site.js is the small script every
//     page gets without the wasm (theme, copy buttons, guide search, embed).
//   - Answer first: a tool's verdict or cause and its first fixes come
//     right under the inputs; after a paste or a drop, revealOnNarrow
//     scrolls them into view on phones. Only the verdict is an aria-live
//     region; long tables fold into <details>.
//   - Errors the user must see are shown with role="alert": the e2e harness
//     fails any page that shows one unless the test expects it.
//   - Readiness: the layout's chrome component sets
//     <body data-wasm-ready="ms"> in OnMount. e2e waits for it before
//     interacting. A page that needs more (a finished computation) sets its
//     own marker with MarkBody("data-<page>-ready", value).
//   - CSS: every file in static/web/css/ is linked and precached (main.css
//     first, then the others in name order). Page rules go in
//     static/web/css/<page>.css, with class names prefixed by the page name.
//   - Handlers must not panic: a panic ends the Go program for the page's
//     life. Heavy work yields (nextTask: a browser timer, not time.Sleep,
//     whose end can fall inside the same browser task) or runs in a Web
//     Worker (wasm/).
//   - Numbers: show bytes as GiB by default (bytesize.Format) with GB on
//     request, and show the formula or rule next to every number.
package app
