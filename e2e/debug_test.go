//go:build e2e

package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestDebugUpdate(t *testing.T) {
	v1dir, v1 := buildVariant(t, "/", "release-one")
	v2dir, v2 := buildVariant(t, "/", "release-two")
	s := serveSite(t, v1dir, "", "public, max-age=600")
	tb := newTab(t, s)
	tb.open("/")
	tb.waitOfflineReady(v1)
	s.swap(v2dir)
	tb.do(chromedp.Reload())
	tb.waitReady()
	evalJS[bool](tb, `(() => { window.__cc = 0; navigator.serviceWorker.addEventListener("controllerchange", () => window.__cc++); return true; })()`)
	for i := 0; i < 6; i++ {
		time.Sleep(time.Second)
		st := evalJS[string](tb, `(async () => { const r = await navigator.serviceWorker.getRegistration(); return JSON.stringify({cc: window.__cc, keys: await caches.keys(), active: r && r.active && r.active.state, waiting: !!(r && r.waiting), installing: !!(r && r.installing), body: document.body.getAttribute("data-update-available")}); })()`)
		t.Log(st)
	}
	t.Log("v1", v1, "v2", v2, evalJS[string](tb, `goappGetenv("GOAPP_VERSION")`))
	t.Log(tb.rec.console)
}
