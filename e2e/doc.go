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
//   - tb.open("/estimate?model=x") navigates and waits for the wasm app to
//     mount (data-wasm-ready on <body>). Interact with tb.click, tb.setValue
//     (types into an input/textarea and fires input+change), tb.text,
//     tb.waitText, and run JS with evalJS[T](tb, expr).
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
