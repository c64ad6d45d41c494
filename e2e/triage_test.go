//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"oomscope/bytesize"
	"oomscope/estimator"
	"oomscope/estimator/triage"
)

// triageMessage is pasted into /triage; the marker line proves the text never
// leaves the page.
func triageMessage(marker string) string {
	return marker + "\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n" +
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.63 GiB of which 1.10 GiB is free. " +
		"Process 777 has 6.00 GiB memory in use. Including non-PyTorch memory, this process has 16.40 GiB memory in use. " +
		"Of the allocated memory 15.20 GiB is allocated by PyTorch, and 700.00 MiB is reserved by PyTorch but unallocated. " +
		"If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  " +
		"See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
}

// grantClipboard lets the page read and write the clipboard without a prompt.
func grantClipboard(t *testing.T, tb *tab, origin string) {
	t.Helper()
	id := chromedp.FromContext(tb.ctx).BrowserContextID
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		_, err := chromedp.CallBrowser(tb.ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true},
			Setting:    browser.PermissionSettingGranted, Origin: origin, BrowserContextID: id,
		})
		if err != nil {
			t.Fatalf("grant %s: %v", name, err)
		}
	}
}

// TestTriage pastes a message, checks the numbers, the cause, the card and the
// fixes against the triage package, copies a fix, switches examples and
// "when", and proves the text never left the page.
func TestTriage(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	grantClipboard(t, tb, s.Origin)
	tb.open("/triage")

	marker := fmt.Sprintf("SECRET-PAYLOAD-%d", time.Now().UnixNano())
	text := triageMessage(marker)
	res := triage.Triage(text, triage.Options{})
	if len(res.Findings) != 1 {
		t.Fatalf("the test message gives %d findings in Go", len(res.Findings))
	}
	f := res.Findings[0]

	tb.setValue("#triage-input", text)
	tb.waitText("#triage-status", "Found 1 out-of-memory message")
	if got := tb.text("#triage-cause-name"); got != string(f.Cause) {
		t.Errorf("cause shown %q, Go says %q", got, f.Cause)
	}
	if got := tb.text("#triage-why"); got != f.Why {
		t.Errorf("why shown %q, Go says %q", got, f.Why)
	}
	// Every number in the table, as the triage package read it.
	for _, fd := range f.Fields {
		if fd.Bytes == nil {
			continue
		}
		row := evalJS[string](tb, fmt.Sprintf(`Array.from(document.querySelectorAll('#triage-numbers tr[data-key=%q]')).map(r => r.textContent).join("|")`, fd.Key))
		want := bytesize.Format(fd.Bytes.Int64(), bytesize.Binary)
		if exact := bytesize.Commas(fd.Bytes.Int64()) + " B"; !strings.Contains(row, want) || !strings.Contains(row, exact) {
			t.Errorf("row %s = %q, want %s and %s", fd.Key, row, want, exact)
		}
	}
	// The card: one segment per CardBar segment, request drawn.
	bar, _ := triage.CardBar(&f)
	segs := evalJS[[]string](tb, `Array.from(document.querySelectorAll('#triage-bar [data-seg]')).map(e => e.dataset.seg)`)
	var wantSegs []string
	for _, sg := range bar.Segments {
		wantSegs = append(wantSegs, sg.Name)
	}
	if strings.Join(segs, ",") != strings.Join(wantSegs, ",") {
		t.Errorf("bar segments %v, want %v", segs, wantSegs)
	}
	if got := tb.text("#triage-req-label"); !strings.Contains(got, bytesize.Format(bar.Request, bytesize.Binary)) {
		t.Errorf("request label %q lacks %s", got, bytesize.Format(bar.Request, bytesize.Binary))
	}
	// Fixes in the package's order; copy the first one.
	titles := evalJS[[]string](tb, `Array.from(document.querySelectorAll('#triage-fixes .triage-fix h3')).map(e => e.textContent)`)
	if len(titles) != len(f.Fixes) || titles[0] != f.Fixes[0].Title {
		t.Errorf("fix titles %q, want %d starting with %q", titles, len(f.Fixes), f.Fixes[0].Title)
	}
	tb.click("#triage-copy-0")
	tb.waitText("#triage-copied-0", "Copied")
	if clip := evalJS[string](tb, `navigator.clipboard.readText()`); clip != f.Fixes[0].Code {
		t.Errorf("clipboard holds %q, want %q", clip, f.Fixes[0].Code)
	}
	// Estimator link carries what the message said.
	href := evalJS[string](tb, `document.querySelector('#triage-estimate-link').getAttribute('href')`)
	if f.Estimator == nil || !strings.HasSuffix(href, "/estimate?"+f.Estimator.Query) {
		t.Errorf("estimator link %q, want …/estimate?%v", href, f.Estimator)
	}
	tb.screenshot("triage-pasted")

	// "When" steers the fixes as the package does.
	tb.setValue("#triage-when", string(triage.WhenEval))
	withWhen := triage.Triage(text, triage.Options{When: triage.WhenEval}).Findings[0]
	poll[bool](tb, fmt.Sprintf(`(() => { const h = document.querySelectorAll('#triage-fixes .triage-fix h3'); return h.length === %d && Array.from(h).map(e => e.textContent).join("|") === %q; })()`,
		len(withWhen.Fixes), joinTitles(withWhen.Fixes)), 10*time.Second)
	if u := evalJS[string](tb, `location.href`); !strings.Contains(u, "when=eval") || strings.Contains(u, marker) {
		t.Errorf("URL %q: want when=eval and never the text", u)
	}

	// An example replaces the text, in the box too.
	tb.setValue("#triage-example", "mps")
	tb.waitText("#triage-kind", "mps")
	tb.waitText("#triage-cause-name", "capacity")
	if v := evalJS[string](tb, `document.querySelector('#triage-input').value`); !strings.HasPrefix(v, "RuntimeError: MPS backend out of memory") {
		t.Errorf("the box holds %q after picking the MPS example", v)
	}

	// Several messages: one tab each.
	two := text + "\n\nValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n"
	tb.setValue("#triage-input", two)
	tb.waitText("#triage-status", "Found 2 out-of-memory messages")
	tb.click("#triage-pick-1")
	tb.waitText("#triage-cause-name", string(triage.CauseKVCacheBudget))
	tb.click("#triage-pick-0")
	tb.waitText("#triage-cause-name", string(f.Cause))

	tb.setViewport(375, 800)
	tb.setValue("#triage-example", "other")
	tb.waitText("#triage-cause-name", "other-process")
	tb.screenshot("triage-phone")

	tb.assertClean()
	assertLocalOnly(t, tb, s)
	_, reqs := tb.rec.snapshot()
	for _, r := range reqs {
		if strings.Contains(r.URL, "SECRET-PAYLOAD") {
			t.Errorf("a request carries the pasted text: %s", r.URL)
		}
	}
}

func joinTitles(fx []triage.Suggestion) string {
	var t []string
	for _, f := range fx {
		t = append(t, f.Title)
	}
	return strings.Join(t, "|")
}

// TestTriageMatcher chooses a model and setup on the page and checks that it
// names the tensor the triage package matches to the failed request.
func TestTriageMatcher(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/triage")
	// 4·2048·128256·4 B of fp32 logits = 3.91 GiB.
	text := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.91 GiB. GPU 0 has a total capacity of 79.15 GiB of which 2.10 GiB is free. " +
		"Including non-PyTorch memory, this process has 77.04 GiB memory in use. Of the allocated memory 74.20 GiB is allocated by PyTorch, and 1.90 GiB is reserved by PyTorch but unallocated."
	tb.setValue("#triage-input", text)
	tb.waitText("#triage-status", "Found 1")
	tb.setValue("#triage-setup-model", "llama-3.1-8b")
	poll[bool](tb, `!document.querySelector('#triage-setup-batch').disabled`, 10*time.Second)
	tb.setValue("#triage-setup-batch", "4")
	tb.setValue("#triage-setup-seq", "2048")

	setup := estimator.DefaultRequest()
	setup.Model, setup.Batch, setup.Seq = "llama-3.1-8b", 4, 2048
	f := triage.Triage(text, triage.Options{Setup: &setup}).Findings[0]
	if f.TensorMatches == nil || len(f.TensorMatches.Matches) == 0 {
		t.Fatalf("the triage package matches no tensor: %+v", f.TensorMatches)
	}
	got := tb.waitText("#triage-matches", f.TensorMatches.Matches[0].Name)
	for _, m := range f.TensorMatches.Matches {
		if !strings.Contains(got, m.Name) {
			t.Errorf("matches shown %q lack %q", got, m.Name)
		}
	}
	if u := evalJS[string](tb, `location.href`); !strings.Contains(u, "model=llama-3.1-8b") || !strings.Contains(u, "batch=4") {
		t.Errorf("URL %q does not keep the setup", u)
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}

// TestTriageServingLink pastes a vLLM log that fails at start-up: the
// estimator link opens serving mode with the model, tensor parallelism and
// flags the log states, the KV numbers to compare are listed, and following
// the link shows the estimator's serving table for that request with no
// error.
func TestTriageServingLink(t *testing.T) {
	s := serveSite(t, distDir(t), "", "no-store")
	tb := newTab(t, s)
	tb.open("/triage")
	text := "(APIServer pid=3761) INFO 09-03 02:11:14 [utils.py:326] non-default args: {'model_tag': 'Qwen2-7B-Instruct', 'port': 8081, 'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384, 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.5}\n" +
		"(EngineCore_0 pid=3902) ERROR 09-03 02:12:26 [core.py:700] ValueError: To serve at least one request with the models's max seq len (16384), (0.88 GiB KV cache is needed, which is larger than the available KV cache memory (0.50 GiB). Based on the available memory, the estimated maximum model length is 9296. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n"
	res := triage.Triage(text, triage.Options{})
	if len(res.Findings) != 1 || res.Findings[0].Estimator == nil {
		t.Fatalf("the triage package gives %d findings, link %v", len(res.Findings), res.Findings)
	}
	l := res.Findings[0].Estimator
	for _, kv := range []string{"mode=serve", "engine=vllm", "model=qwen2-7b", "tp=2", "max_model_len=16384", "gpu_memory_utilization=0.5"} {
		if !strings.Contains("&"+l.Query+"&", "&"+kv+"&") {
			t.Errorf("link %q lacks %s", l.Query, kv)
		}
	}
	tb.setValue("#triage-input", text)
	tb.waitText("#triage-status", "Found 1 out-of-memory message")
	href := evalJS[string](tb, `document.querySelector('#triage-estimate-link').getAttribute('href')`)
	if !strings.HasSuffix(href, "/estimate?"+l.Query) {
		t.Errorf("estimator link %q, want …/estimate?%s", href, l.Query)
	}
	for _, want := range []string{"0.50 GiB", "0.88 GiB", "9296"} {
		tb.waitText("#triage-compare", want)
	}
	tb.click("#triage-estimate-link")
	poll[bool](tb, `!!document.querySelector('#est-serving-table')`, 20*time.Second)
	noEstimateError(tb)
	tb.assertNoErrorBanner("the estimator opened from a vLLM message")
	for key, want := range map[string]string{"mode": "serve", "engine": "vllm", "model": "qwen2-7b", "tp": "2", "max_model_len": "16384", "gpu_memory_utilization": "0.5"} {
		if got := evalJS[string](tb, fmt.Sprintf(`document.getElementById(%q).value`, "est-"+key)); got != want {
			t.Errorf("estimator field %s = %q, want %q", key, got, want)
		}
	}
	want := estimateFor(t, l.Query).Serving
	if got := evalJS[string](tb, `document.querySelector('#est-serving-table tr[data-serving="kv_cache_tokens"] td[data-value]').dataset.value`); got != fmt.Sprint(want.KVCacheTokens) {
		t.Errorf("KV cache tokens on the page %s, the estimator says %d", got, want.KVCacheTokens)
	}
	tb.assertClean()
	assertLocalOnly(t, tb, s)
}
