package static

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newTestSite writes a small site tree and returns its directory.
func newTestSite(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"index.html":           "<p>home</p>",
		"estimate.html":        "<p>estimate</p>",
		"guides.html":          "<p>guides</p>",
		"guides/measure.html":  "<p>measure</p>",
		"web/app.wasm":         "\x00asm wasm bytes",
		"web/css/main.css":     "body{}",
		"app.js":               "console.log(1)",
		"manifest.webmanifest": "{}",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestServerRouting(t *testing.T) {
	dir := newTestSite(t)
	tests := []struct {
		prefix, method, path string
		status               int
		body, ctype          string
	}{
		{"", "GET", "/", 200, "home", "text/html"},
		{"", "GET", "/estimate", 200, "estimate", "text/html"},
		{"", "GET", "/estimate?model=x", 200, "estimate", "text/html"},
		{"", "GET", "/guides", 200, "<p>guides", "text/html"},
		{"", "GET", "/guides/measure", 200, "measure", "text/html"},
		{"", "GET", "/web/app.wasm", 200, "asm", "application/wasm"},
		{"", "GET", "/web/css/main.css", 200, "body", "text/css"},
		{"", "GET", "/app.js", 200, "console", "text/javascript"},
		{"", "GET", "/manifest.webmanifest", 200, "{}", "application/manifest+json"},
		{"", "GET", "/nope", 404, "", ""},
		{"", "GET", "/../etc/passwd", 404, "", ""},
		{"", "POST", "/", 405, "", ""},
		{"/sub", "GET", "/sub/", 200, "home", "text/html"},
		{"/sub", "GET", "/sub/estimate", 200, "estimate", "text/html"},
		{"/sub", "GET", "/sub", 301, "", ""},
		{"/sub", "GET", "/estimate", 404, "", ""},
	}
	for _, tt := range tests {
		s := &Server{Dir: dir, Prefix: tt.prefix, CacheControl: "no-store"}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status {
			t.Errorf("%s %s (prefix %q) = %d, want %d", tt.method, tt.path, tt.prefix, rec.Code, tt.status)
			continue
		}
		if tt.status != 200 {
			continue
		}
		if !strings.Contains(rec.Body.String(), tt.body) {
			t.Errorf("%s body %q lacks %q", tt.path, rec.Body.String(), tt.body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
			t.Errorf("%s Content-Type %q, want %q", tt.path, ct, tt.ctype)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s Cache-Control %q", tt.path, cc)
		}
	}
}

func TestServerGzipAndETag(t *testing.T) {
	dir := newTestSite(t)
	s := &Server{Dir: dir}
	req := httptest.NewRequest("GET", "/web/app.wasm", nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("wasm not gzipped: %v", rec.Header())
	}
	zr, err := gzip.NewReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	if string(raw) != "\x00asm wasm bytes" {
		t.Errorf("gunzipped body = %q", raw)
	}
	etag := rec.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	// Same content: 304. Changed content in the same second: 200.
	req2 := httptest.NewRequest("GET", "/web/app.wasm", nil)
	req2.Header.Set("Accept-Encoding", "gzip")
	req2.Header.Set("If-None-Match", etag)
	rec2 := httptest.NewRecorder()
	s.ServeHTTP(rec2, req2)
	if rec2.Code != http.StatusNotModified {
		t.Errorf("revalidation = %d, want 304", rec2.Code)
	}
	st, _ := os.Stat(filepath.Join(dir, "web/app.wasm"))
	os.WriteFile(filepath.Join(dir, "web/app.wasm"), []byte("\x00asm other bytes"), 0o644)
	os.Chtimes(filepath.Join(dir, "web/app.wasm"), st.ModTime(), st.ModTime())
	rec3 := httptest.NewRecorder()
	s.ServeHTTP(rec3, req2)
	if rec3.Code != http.StatusOK {
		t.Errorf("changed file revalidation = %d, want 200", rec3.Code)
	}
	// Without Accept-Encoding the body is plain.
	rec4 := httptest.NewRecorder()
	s.ServeHTTP(rec4, httptest.NewRequest("GET", "/web/app.wasm", nil))
	if rec4.Header().Get("Content-Encoding") != "" || rec4.Body.String() != "\x00asm other bytes" {
		t.Errorf("plain request got %v %q", rec4.Header(), rec4.Body.String())
	}
}

func TestServerPrecompressed(t *testing.T) {
	dir := newTestSite(t)
	big := strings.Repeat("wasm bytes that compress well ", 1000)
	os.WriteFile(filepath.Join(dir, "web/app.wasm"), []byte(big), 0o644)
	if err := Precompress(dir, 5); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"web/app.wasm.gz", "web/app.wasm.br"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("Precompress did not write %s: %v", f, err)
		}
	}
	// Tiny files do not get copies that would not save anything.
	if _, err := os.Stat(filepath.Join(dir, "manifest.webmanifest.gz")); err == nil {
		t.Errorf("a 2-byte file got a .gz copy")
	}
	s := &Server{Dir: dir}
	get := func(accept string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/web/app.wasm", nil)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		return rec
	}
	for _, tt := range []struct{ accept, enc, file string }{
		{"gzip, deflate, br, zstd", "br", "web/app.wasm.br"},
		{"gzip", "gzip", "web/app.wasm.gz"},
		{"br;q=0, gzip", "gzip", "web/app.wasm.gz"},
		{"", "", "web/app.wasm"},
	} {
		rec := get(tt.accept)
		want, _ := os.ReadFile(filepath.Join(dir, tt.file))
		if rec.Header().Get("Content-Encoding") != tt.enc || !bytes.Equal(rec.Body.Bytes(), want) {
			t.Errorf("Accept-Encoding %q: got encoding %q, %d bytes; want %q, the %d bytes of %s",
				tt.accept, rec.Header().Get("Content-Encoding"), rec.Body.Len(), tt.enc, len(want), tt.file)
		}
		if rec.Header().Get("Content-Type") != "application/wasm" {
			t.Errorf("Accept-Encoding %q: Content-Type %q", tt.accept, rec.Header().Get("Content-Type"))
		}
	}
	// A copy older than its file (a new build without -precompress) is
	// never served.
	later := time.Now().Add(time.Hour)
	os.WriteFile(filepath.Join(dir, "web/app.wasm"), []byte(big+"changed"), 0o644)
	os.Chtimes(filepath.Join(dir, "web/app.wasm"), later, later)
	rec := get("br, gzip")
	if rec.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("stale copies: encoding %q, want on-the-fly gzip", rec.Header().Get("Content-Encoding"))
	}
	zr, _ := gzip.NewReader(rec.Body)
	if raw, _ := io.ReadAll(zr); string(raw) != big+"changed" {
		t.Errorf("stale copies: served old content")
	}
}

func TestServerNotFoundPage(t *testing.T) {
	dir := newTestSite(t)
	os.WriteFile(filepath.Join(dir, "404.html"), []byte("<h1>This page ran out of memory</h1>"), 0o644)
	for _, tt := range []struct{ prefix, path string }{{"", "/nope"}, {"", "/a/b/c"}, {"/sub", "/elsewhere"}, {"/sub", "/sub/nope"}} {
		s := &Server{Dir: dir, Prefix: tt.prefix}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", tt.path, nil))
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "ran out of memory") {
			t.Errorf("%s (prefix %q) = %d %q, want 404 with 404.html", tt.path, tt.prefix, rec.Code, rec.Body.String())
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("%s: Content-Type %q", tt.path, ct)
		}
	}
}
