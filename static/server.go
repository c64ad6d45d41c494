package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server serves a built site from Dir the way a static host such as GitHub
// Pages does: "/route" is answered with route.html, "/dir/" with
// dir/index.html, an unknown path with 404.html and status 404, wasm is
// sent as application/wasm, and text and wasm are compressed when the
// client accepts it: with the precompressed name.br or name.gz written by
// Precompress when there is one (brotli preferred), else gzipped on the fly.
type Server struct {
	Dir string
	// Prefix is the path the site lives under ("" or e.g. "/repo"). Requests
	// outside it get 404; the bare prefix redirects to prefix + "/".
	Prefix string
	// CacheControl is sent with every file; "" sends none. Tests use
	// "no-store" so that only the service worker can answer offline.
	CacheControl string

	mu    sync.Mutex
	files map[string]cached // by file path
}

// cached is what the server derived from one version of a file.
type cached struct {
	mod  time.Time
	size int64
	etag string // strong validator from the content, as static hosts send
	gz   []byte // gzipped body, made on first request that accepts gzip
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if s.Prefix != "" {
		if p == s.Prefix {
			http.Redirect(w, r, s.Prefix+"/", http.StatusMovedPermanently)
			return
		}
		rest, ok := strings.CutPrefix(p, s.Prefix+"/")
		if !ok {
			s.notFound(w, r)
			return
		}
		p = "/" + rest
	}
	file, ok := s.resolve(p)
	if !ok {
		s.notFound(w, r)
		return
	}
	s.serveFile(w, r, file, http.StatusOK)
}

// notFound answers with the site's 404.html, or a plain 404 without one.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	page := filepath.Join(s.Dir, "404.html")
	if st, err := os.Stat(page); err == nil && st.Mode().IsRegular() {
		s.serveFile(w, r, page, http.StatusNotFound)
		return
	}
	http.NotFound(w, r)
}

// resolve maps a URL path to a file under Dir, as a static host does.
func (s *Server) resolve(urlPath string) (string, bool) {
	clean := path.Clean("/" + urlPath)
	candidates := []string{clean}
	switch {
	case strings.HasSuffix(urlPath, "/"):
		candidates = []string{path.Join(clean, "index.html")}
	case path.Ext(clean) == "":
		candidates = []string{clean + ".html", path.Join(clean, "index.html")}
	}
	for _, c := range candidates {
		f := filepath.Join(s.Dir, filepath.FromSlash(c))
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			return f, true
		}
	}
	return "", false
}

// ContentType returns the MIME type a static host sends for a file name.
func ContentType(name string) string {
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".wasm":
		return "application/wasm"
	case ".webmanifest":
		return "application/manifest+json"
	case ".js":
		return "text/javascript; charset=utf-8"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		return "application/octet-stream"
	}
}

func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, file string, status int) {
	st, err := os.Stat(file)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ContentType(file))
	h.Set("X-Content-Type-Options", "nosniff")
	if s.CacheControl != "" {
		h.Set("Cache-Control", s.CacheControl)
	}
	h.Add("Vary", "Accept-Encoding")
	c, err := s.load(file, st, false)
	if err != nil {
		http.Error(w, "cannot read file", http.StatusInternalServerError)
		return
	}
	// Validate by content, not by modification time: two deploys within
	// the same second must not answer 304 for a changed file.
	etag := c.etag
	var body io.ReadSeeker
	if compressible[strings.ToLower(filepath.Ext(file))] {
		for _, enc := range []struct{ name, ext string }{{"br", ".br"}, {"gzip", ".gz"}} {
			if !accepts(r, enc.name) {
				continue
			}
			if b, err := os.ReadFile(file + enc.ext); err == nil && s.fresh(file+enc.ext, st) {
				h.Set("Content-Encoding", enc.name)
				etag, body = c.etag+"-"+enc.name, bytes.NewReader(b)
				break
			}
		}
		if body == nil && accepts(r, "gzip") {
			if c, err = s.load(file, st, true); err != nil {
				http.Error(w, "cannot read file", http.StatusInternalServerError)
				return
			}
			h.Set("Content-Encoding", "gzip")
			etag, body = c.etag+"-gz", bytes.NewReader(c.gz)
		}
	}
	if body == nil {
		f, err := os.Open(file)
		if err != nil {
			http.Error(w, "cannot read file", http.StatusInternalServerError)
			return
		}
		defer f.Close()
		body = f
	}
	if status != http.StatusOK {
		h.Set("Content-Length", strconv.FormatInt(size(body), 10))
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			io.Copy(w, body)
		}
		return
	}
	h.Set("ETag", `"`+etag+`"`)
	http.ServeContent(w, r, "", st.ModTime(), body)
}

// fresh reports whether a precompressed copy is at least as new as the
// file it was made from, so a stale copy is never served.
func (s *Server) fresh(copy string, orig os.FileInfo) bool {
	st, err := os.Stat(copy)
	return err == nil && !st.ModTime().Before(orig.ModTime())
}

func size(r io.Seeker) int64 {
	n, _ := r.Seek(0, io.SeekEnd)
	r.Seek(0, io.SeekStart)
	return n
}

// load returns the file's validator and, when gz is set, its gzipped body,
// computing each once per version of the file.
func (s *Server) load(file string, st os.FileInfo, gz bool) (cached, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.files[file]
	if !ok || !c.mod.Equal(st.ModTime()) || c.size != st.Size() {
		c = cached{mod: st.ModTime(), size: st.Size()}
	}
	if c.etag != "" && (!gz || c.gz != nil) {
		return c, nil
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return c, err
	}
	sum := sha256.Sum256(raw)
	c.etag = hex.EncodeToString(sum[:12])
	if gz {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zw.Write(raw)
		if err := zw.Close(); err != nil {
			return c, err
		}
		c.gz = buf.Bytes()
	}
	if s.files == nil {
		s.files = map[string]cached{}
	}
	s.files[file] = c
	return c, nil
}

// accepts reports whether the request's Accept-Encoding allows enc.
func accepts(r *http.Request, enc string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(name) == enc && strings.ReplaceAll(q, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
