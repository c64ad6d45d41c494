package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
)

// compressible lists the file types a static host compresses.
var compressible = map[string]bool{
	".html": true, ".js": true, ".css": true, ".wasm": true, ".json": true,
	".svg": true, ".webmanifest": true, ".txt": true, ".md": true, ".xml": true,
}

// isCompressed reports whether name is a precompressed copy (x.gz, x.br).
func isCompressed(name string) bool {
	return strings.HasSuffix(name, ".gz") || strings.HasSuffix(name, ".br")
}

// Precompress writes name.gz (gzip, best compression) next to every
// compressible file under dir, and name.br (brotli at the given quality,
// 0–11) when brotli > 0, for Server and for static hosts that serve
// precompressed files. Copies smaller than 95 % of the file are kept; the
// others are removed, so that only useful copies are served. It uses one
// goroutine per CPU.
func Precompress(dir string, brotliQuality int) error {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if compressible[strings.ToLower(filepath.Ext(p))] {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Biggest first, so the wasm files do not start last.
	sizes := map[string]int64{}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil {
			sizes[f] = st.Size()
		}
	}
	sort.Slice(files, func(i, j int) bool { return sizes[files[i]] > sizes[files[j]] })
	work := make(chan string)
	errs := make(chan error, len(files))
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				errs <- compressFile(f, brotliQuality)
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func compressFile(name string, brotliQuality int) error {
	raw, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw)
	if err := zw.Close(); err != nil {
		return err
	}
	if err := keepIfSmaller(name+".gz", gz.Bytes(), len(raw)); err != nil {
		return err
	}
	if brotliQuality <= 0 {
		return keepIfSmaller(name+".br", nil, 0)
	}
	br, err := brotliCached(raw, min(brotliQuality, brotli.BestCompression))
	if err != nil {
		return err
	}
	return keepIfSmaller(name+".br", br, len(raw))
}

// brotliCached compresses b at quality q. Brotli's best quality takes about
// a minute for app.wasm, and go build rewrites the wasm on every make dist,
// so results for files over 256 KiB are kept in the user's cache directory
// under the SHA-256 of the input (failures to cache are ignored).
func brotliCached(b []byte, q int) ([]byte, error) {
	var cached string
	if len(b) > 256<<10 {
		if dir, err := os.UserCacheDir(); err == nil {
			sum := sha256.Sum256(b)
			cached = filepath.Join(dir, "oomscope-brotli", fmt.Sprintf("%x-q%d.br", sum[:16], q))
			if out, err := os.ReadFile(cached); err == nil {
				return out, nil
			}
		}
	}
	var buf bytes.Buffer
	w := brotli.NewWriterOptions(&buf, brotli.WriterOptions{Quality: q, LGWin: 24})
	w.Write(b)
	if err := w.Close(); err != nil {
		return nil, err
	}
	if cached != "" && os.MkdirAll(filepath.Dir(cached), 0o755) == nil {
		os.WriteFile(cached, buf.Bytes(), 0o644)
	}
	return buf.Bytes(), nil
}

// keepIfSmaller writes b to name when it saves at least 5 %, and removes a
// stale name otherwise.
func keepIfSmaller(name string, b []byte, raw int) error {
	if len(b)*100 >= raw*95 {
		if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	return os.WriteFile(name, b, 0o644)
}
