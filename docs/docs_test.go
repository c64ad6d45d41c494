package docs

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository root, seen from this package.
const root = ".."

// anchors returns the GitHub heading anchors of a Markdown file: the
// heading text lower-cased, every character that is not a letter, a digit,
// a space, a hyphen or an underscore dropped, spaces turned into hyphens;
// a repeated anchor gets -1, -2, ... Headings inside code fences do not
// count.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	seen := map[string]int{}
	fence := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := slug(text)
		if n := seen[a]; n > 0 {
			seen[a]++
			a = a + "-" + itoa(n)
		} else {
			seen[a] = 1
		}
		out[a] = true
	}
	return out
}

// slug is GitHub's heading anchor of text (see anchors).
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"§1 Models and GPUs":                       "1-models-and-gpus",
		"§3 Readouts: allocated, reserved, device": "3-readouts-allocated-reserved-device",
		"Page and worker":                          "page-and-worker",
		"CUDA 2.x":                                 "cuda-2x",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}

var (
	// citeRe matches a citation of a note: docs/<file>.md with an optional
	// #section.
	citeRe = regexp.MustCompile(`docs/([A-Za-z0-9_.-]+\.md)(#[A-Za-z0-9_-]+)?`)
	// outsideRe matches citations of documents that are not in the
	// repository: the research notes the code was first written from.
	outsideRe = regexp.MustCompile(`notes §|[a-z]-notes\b|oom-formats\.md|snapshot-format\.md|shared/docs`)
	// linkRe matches a relative Markdown link to a note.
	linkRe = regexp.MustCompile(`\]\(((?:docs/)?[A-Za-z0-9_-]+\.md)(#[A-Za-z0-9_-]+)?\)`)
	// selfLinkRe matches a Markdown link to a section of the same file.
	selfLinkRe = regexp.MustCompile(`\]\(#([A-Za-z0-9_-]+)\)`)
)

// comments returns the text of a source file's comments: every comment of
// a Go file, the // lines of a JavaScript file.
func comments(t *testing.T, path string) []string {
	t.Helper()
	if strings.HasSuffix(path, ".js") {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if i := strings.Index(l, "//"); i >= 0 {
				out = append(out, l[i:])
			}
		}
		return out
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, g := range f.Comments {
		out = append(out, g.Text())
	}
	return out
}

// sources lists the repository's Go files and the site's own scripts.
func sources(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "bin", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".js") && strings.Contains(filepath.ToSlash(p), "static/") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found %d source files under %s: wrong root?", len(out), root)
	}
	return out
}

// TestCitations: every docs/<file>.md#<section> cited in a comment exists,
// and no comment cites a document outside the repository.
func TestCitations(t *testing.T) {
	notes := map[string]map[string]bool{}
	note := func(name string) map[string]bool {
		if a, ok := notes[name]; ok {
			return a
		}
		var a map[string]bool
		if _, err := os.Stat(name); err == nil {
			a = anchors(t, name)
		}
		notes[name] = a
		return a
	}
	cited := 0
	for _, p := range sources(t) {
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		for _, c := range comments(t, p) {
			for _, m := range citeRe.FindAllStringSubmatch(c, -1) {
				a := note(m[1])
				if a == nil {
					t.Errorf("%s cites docs/%s, which does not exist", rel, m[1])
					continue
				}
				cited++
				if m[2] != "" && !a[m[2][1:]] {
					t.Errorf("%s cites docs/%s%s: no such section", rel, m[1], m[2])
				}
			}
			if m := outsideRe.FindString(c); m != "" {
				t.Errorf("%s cites a document outside the repository (%q): cite docs/<file>.md#<section>", rel, m)
			}
		}
	}
	if cited < 20 {
		t.Errorf("only %d citations found: the scan is broken", cited)
	}
}

// TestLinks: the README links every note, and every Markdown link between
// the notes and from the README resolves to a file and a section.
func TestLinks(t *testing.T) {
	mds, err := filepath.Glob("*.md")
	if err != nil || len(mds) == 0 {
		t.Fatalf("no notes: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range mds {
		if !strings.Contains(string(readme), "](docs/"+md) {
			t.Errorf("README.md does not link docs/%s", md)
		}
	}
	check := func(from, dir string, text string) {
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			target := filepath.Join(dir, m[1])
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s, which does not exist", from, m[1])
				continue
			}
			if m[2] != "" && !anchors(t, target)[m[2][1:]] {
				t.Errorf("%s links %s%s: no such section", from, m[1], m[2])
			}
		}
	}
	check("README.md", root, string(readme))
	for _, md := range mds {
		b, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		check("docs/"+md, ".", string(b))
		own := anchors(t, md)
		for _, m := range selfLinkRe.FindAllStringSubmatch(string(b), -1) {
			if !own[m[1]] {
				t.Errorf("docs/%s links #%s: no such section", md, m[1])
			}
		}
	}
}
