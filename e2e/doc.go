// Package e2e holds the end-to-end tests: the generated site served by
// static.Server on 127.0.0.1, driven by chromedp in Debian's Chromium.
//
// The tests carry the build tag e2e; run them with make e2e (which builds
// dist/ first and sets OOMSCOPE_DIST) or
//
//	OOMSCOPE_DIST=$PWD/dist go test -tags e2e ./e2e/ -run TestName -v
//
// # Conventions for page tests (e2e/<page>_test.go)
//
//   - One Chromium is shared by the whole suite (TestMain). Each test opens
//     its own isolated browser context: tb := newTab(t, s), where
//     s := serveSite(t, distDir(t), "", "no-store") serves the built site
//     and records every request it receives.
//   - tb.open("/estimate?model=x") navigates and waits until the page is
//     ready (the wasm app mounted: data-wasm-ready on <body>; or, on a static
//     page such as a guide, the document loaded), then fails the test if the
//     page shows an error banner (role="alert"). assertClean checks again at
//     the end; a test that shows an error on purpose calls tb.expectErrors()
//     first. Interact with tb.click, tb.setValue (types into an
//     input/textarea and fires input+change), tb.text, tb.waitText, and run
//     JS with evalJS[T](tb, expr) or poll[T](tb, expr, timeout).
//   - tb.setViewport(375, 800) and tb.setColorScheme("dark") set the screen
//     and the system theme; axeCheck(tb) runs axe-core (installed by make
//     axe from e2e/axe/package-lock.json, never shipped) on the page.
//   - s.hold("/web/app.wasm") holds a file back until release() is called,
//     to look at a page before its wasm arrived.
//   - tb.dropFile(selector, path) performs a trusted drag and drop of a real
//     file; tb.uploadFile(selector, path) sets an <input type=file>.
//   - At the end, tb.assertClean() fails on any console error, uncaught
//     exception or Go panic, and assertLocalOnly(t, tb, s) fails on any
//     request to another host, any non-GET, and any request carrying data.
//     tb.screenshot("name") writes e2e/out/name.png for humans to look at.
//   - Every worker, service worker and frame a tab's page starts is watched
//     from its first instruction (targets_test.go), so both checks cover
//     what it does too; tb.requireWatched("worker") fails a test whose
//     page should have used a Web Worker and did not.
//   - Compare what the page shows with what the Go packages compute in the
//     test itself, not with hard-coded numbers.
package e2e
