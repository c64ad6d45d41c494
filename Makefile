# OOMScope. Two commands set everything up on a fresh machine:
#   make serve   build the site into dist/ and serve it on http://127.0.0.1:8080
#   make test    vet, unit tests, build dist/, then the end-to-end suite in Chromium
SHELL := /bin/bash
GO    ?= go
DIST  ?= dist
BASE  ?= /
ADDR  ?= 127.0.0.1:8080
LABEL ?=
# FUZZTIME is how long make fuzz runs each fuzz target.
FUZZTIME ?= 60s
# SITE_URL: the public URL of the site's root (absolute sitemap, og: links).
SITE_URL ?=
# BROTLI: quality of the precompressed .br copies (11 is best and takes about
# a minute for app.wasm the first time; results are cached by content).
BROTLI ?= 11
# Every wasm/<name>/ main package becomes $(DIST)/web/<name>.wasm.
WASM_MAINS := $(patsubst wasm/%/,%,$(sort $(dir $(wildcard wasm/*/main.go))))
# app.wasm (the user interface) is built without inlining: it is about 8 %
# smaller compressed, and its work is small (make wasm-size shows what the
# binary is made of). The workers, which do the heavy analysis, keep it.
APP_GCFLAGS := -gcflags=all=-l

.PHONY: all dist serve test unit unit-wasm vet e2e axe chromium bench bench-browser bench-startup fuzz cli clean wasm-size

all: dist

dist:
	@mkdir -p $(DIST)/web
	@for m in $(WASM_MAINS); do \
	  echo "wasm  $$m -> $(DIST)/web/$$m.wasm"; \
	  flags=; [ $$m = app ] && flags="$(APP_GCFLAGS)"; \
	  GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags='-s -w' $$flags -o $(DIST)/web/$$m.wasm ./wasm/$$m || exit 1; \
	done
	@$(GO) run ./static/cmd/site build -out $(DIST) -base '$(BASE)' -label '$(LABEL)' -site-url '$(SITE_URL)' -precompress -brotli $(BROTLI)
	@cmp -s $(DIST)/wasm_exec.js "$$($(GO) env GOROOT)/lib/wasm/wasm_exec.js" || { echo "wasm_exec.js does not match this Go toolchain"; exit 1; }

serve: dist
	$(GO) run ./static/cmd/site serve -dir $(DIST) -addr $(ADDR) -base '$(BASE)'

# wasm-size prints the size of app.wasm by section and by package (from an
# unstripped build, which has the function names).
wasm-size:
	@mkdir -p bin
	GOOS=js GOARCH=wasm $(GO) build -trimpath $(APP_GCFLAGS) -o bin/app-names.wasm ./wasm/app
	$(GO) run ./static/cmd/wasmsize bin/app-names.wasm

cli:
	$(GO) build -trimpath -o bin/oomscope ./cmd/oomscope

vet:
	$(GO) mod tidy -diff
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./app/... ./wasm/... ./snapshot/...
	$(GO) vet -tags e2e ./e2e/
	$(GO) build -o bin/staticcheck honnef.co/go/tools/cmd/staticcheck
	bin/staticcheck ./...
	GOOS=js GOARCH=wasm bin/staticcheck ./app/... ./wasm/... ./snapshot/...
	bin/staticcheck -tags e2e ./e2e/

unit:
	$(GO) test ./... 

# unit-wasm runs the decoder's and the replay's tests as the browser worker
# runs that code: compiled to WebAssembly, in Node (the go_js_wasm_exec
# wrapper of the Go toolchain). The decoder has WebAssembly-only code
# (snapshot/foldscan_wasm.s, foldlazy_wasm.s, addlazy_wasm.s, leadpairs_wasm.s,
# addrow_wasm.s, release_wasm.s, ledhit_wasm.s and cachedframes_wasm.s, the
# stack hash of stackhash_wasm.go) that the native tests do not reach (AddRow
# runs TestAddRowGo, the assembly against addRowGo; StackCache the stack
# cache's lookups, ledHit's among them). Node comes with npm (.ci/run installs it).
WASM_TESTS := Fold|Lazy|Dedupe|Differential|DecodeData|EntryRun|AddRow|Split|StackHash|ReleaseEntries|StackCache|LedHit|CachedFrames
unit-wasm:
	@command -v node >/dev/null 2>&1 || { echo "node is missing: apt-get install -y nodejs"; exit 1; }
	GOOS=js GOARCH=wasm $(GO) test -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" -run '$(WASM_TESTS)' ./snapshot/
	GOOS=js GOARCH=wasm $(GO) test -exec="$$($(GO) env GOROOT)/lib/wasm/go_js_wasm_exec" ./snapshot/analysis/

# chromium installs Debian's Chromium when it is missing (as root), or says how.
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; \
	  else echo "Chromium is missing: run  sudo apt-get update && sudo apt-get install -y chromium"; exit 1; fi; }

# axe installs axe-core (pinned by e2e/axe/package-lock.json) for the
# accessibility checks of the e2e suite; it is never part of the site.
axe: e2e/axe/node_modules/axe-core/axe.min.js
e2e/axe/node_modules/axe-core/axe.min.js: e2e/axe/package-lock.json
	cd e2e/axe && npm ci --no-audit --no-fund
	@touch $@

# The e2e suite serves dist with quick brotli copies (BROTLI=5): quality 11
# only pays off for a deploy.
e2e: BROTLI = 5
e2e: chromium axe dist
	OOMSCOPE_DIST=$(abspath $(DIST)) $(GO) test -count=1 -tags e2e -timeout 20m ./e2e/ $(E2EFLAGS)

test: vet unit unit-wasm e2e

# bench runs the Go benchmarks; snapshot/load's BenchmarkLoad prints a table
# of both benchmark families at OOMSCOPE_BENCH_MB MiB (default 10,55,200;
# add 1024 for the 1 GiB files) and the real snapshots.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./estimator/... ./snapshot/...

# bench-browser times the estimator page and the snapshot page in Chromium,
# the latter on both families at 10, 55, 200 MiB and 1 GiB plus the real
# snapshots (OOMSCOPE_BENCH_MB, OOMSCOPE_BENCH_FAMILIES and
# OOMSCOPE_BENCH_FILES change that); the 1 GiB files need 2 GB of disk
# under OOMSCOPE_BENCH_DIR (default: a temp dir). It also drops 16 generated
# ranks of 10 MiB at once for the overview of ranks (OOMSCOPE_BENCH_RANKS,
# OOMSCOPE_BENCH_RANK_MB, OOMSCOPE_BENCH_CORES). OOMSCOPE_BENCH_SETTLE=3000
# hands each file (and the ranks) over 3 s after the page is ready
# (default: at once). For the single files: OOMSCOPE_BENCH_TASKS=1 lists the long tasks,
# OOMSCOPE_BENCH_TRACE=1 their CPU time and when each step of the page and
# the worker happened (one clock), the worker's warm-up state at the
# hand-over and the WebAssembly compiles after it (first calls per thread,
# functions optimised, the tasks of the most wall time and what ran in them;
# OOMSCOPE_BENCH_TRACEFILE=FILE also writes the trace's events there, as
# JSON, and a copy a round in FILE.1, FILE.2, ...), OOMSCOPE_BENCH_PROFILES=DIR writes CPU profiles of
# the page and the analysis worker (and the page's while the ranks are
# analysed, ranks-page.cpuprofile), OOMSCOPE_BENCH_JSFLAGS passes V8 flags
# (diagnosis only, e.g. --no-liftoff) and OOMSCOPE_BENCH_CHROMELOG=FILE
# keeps Chromium's output (what --trace-wasm-compilation-times prints).
# OOMSCOPE_BENCH_VISITS=2 drops each file on a returning user's visit: in a
# new tab of the browser's profile after a first visit (warm-up done, the
# service worker's cache full) on a site of its own; 3 after two such
# visits, the first that gets the worker's optimised code from the code
# cache. It logs the WebAssembly code-cache events of each visit
# (v8.wasm.moduleCacheHit, cachedModule); see docs/site.md#returning-visits.
bench-browser: chromium axe dist
	OOMSCOPE_DIST=$(abspath $(DIST)) $(GO) test -count=1 -tags e2e -timeout 60m -run '^$$' -bench 'Browser(Snapshot|Estimate)' -benchtime 1x ./e2e/

# bench-startup: first and second visit of the estimator (real content,
# interactive, bytes transferred); OOMSCOPE_BENCH_MBPS=1.6 throttles.
bench-startup: chromium axe dist
	OOMSCOPE_DIST=$(abspath $(DIST)) $(GO) test -count=1 -tags e2e -timeout 30m -run '^$$' -bench BrowserStartup -benchtime 1x ./e2e/

# fuzz runs every fuzz target for FUZZTIME and prints, per target, its last
# progress line: executions and the new inputs that raised coverage.
fuzz:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; \
	for p in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$p 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$p $$f ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$p > $$log 2>&1 || { cat $$log; exit 1; }; \
	    grep 'execs:' $$log | tail -1; \
	  done; done

clean:
	rm -rf $(DIST) dist-* bin e2e/out e2e/axe/node_modules
