package triage

import (
	"regexp"
	"testing"
)

// TestLazyPatternsCompile compiles every pattern made by lazy: they are no
// longer compiled at package initialisation, so a bad one would otherwise
// panic only when a message first reaches it.
func TestLazyPatternsCompile(t *testing.T) {
	// 85 package-level patterns, 3 line prefixes and 4 vLLM KV logs.
	if n := len(lazyPatterns); n < 92 {
		t.Errorf("%d lazy patterns registered, want at least 92", n)
	}
	for _, p := range lazyPatterns {
		if _, err := regexp.Compile(p); err != nil {
			t.Errorf("pattern %q: %v", p, err)
		}
	}
	for _, kv := range vllmSettingRes() {
		if kv.re == nil {
			t.Errorf("vLLM setting %s: no pattern", kv.key)
		}
	}
}
