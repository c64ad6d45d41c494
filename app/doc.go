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
//     needs the prefix and the generator adds it itself.
//   - URL state: read the query in OnNav with Query(ctx); write it back on
//     every change with ReplaceQuery(ctx, values) so the URL always restores
//     the state (shared links, iframes with URL parameters).
//   - Readiness: the layout's chrome component sets
//     <body data-wasm-ready="ms"> in OnMount. e2e waits for it before
//     interacting. A page that needs more (a finished computation) sets its
//     own marker with MarkBody("data-<page>-ready", value).
//   - CSS: every file in static/web/css/ is linked and precached (main.css
//     first, then the others in name order). Page rules go in
//     static/web/css/<page>.css, with class names prefixed by the page name.
//   - Handlers must not panic: a panic ends the Go program for the page's
//     life. Heavy work yields (time.Sleep) or runs in a Web Worker (wasm/).
//   - Numbers: show bytes as GiB by default (bytesize.Format) with GB on
//     request, and show the formula or rule next to every number.
package app
