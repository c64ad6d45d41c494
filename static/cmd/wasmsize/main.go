// Command wasmsize prints what makes a Go WebAssembly binary big: the size
// of each section and the code bytes per Go package, read from the binary's
// "name" section (so build it without -ldflags=-s; make wasm-size does).
//
//	wasmsize [-n 40] app.wasm
//
// Code is attributed by function name; the data section (type data, string
// constants, pclntab) cannot be split by package from the binary alone and
// is shown as one line.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strings"
)

func main() {
	log.SetFlags(0)
	n := flag.Int("n", 40, "packages to list")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: wasmsize [-n 40] file.wasm")
	}
	b, err := os.ReadFile(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	m, err := parse(b)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "%-24s %10s\n", "section", "bytes")
	for _, s := range m.sections {
		fmt.Fprintf(w, "%-24s %10d\n", s.name, s.size)
	}
	fmt.Fprintf(w, "%-24s %10d\n\n", "total", len(b))
	byPkg := map[string]int{}
	for i, size := range m.bodies {
		byPkg[pkgOf(m.names[uint32(i+m.imports)])] += size
	}
	type row struct {
		pkg  string
		size int
	}
	var rows []row
	total := 0
	for p, s := range byPkg {
		rows = append(rows, row{p, s})
		total += s
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].size > rows[j].size || rows[i].size == rows[j].size && rows[i].pkg < rows[j].pkg
	})
	fmt.Fprintf(w, "%-60s %10s %6s\n", "package (code)", "bytes", "%")
	for i, r := range rows {
		if i == *n {
			rest := 0
			for _, r := range rows[i:] {
				rest += r.size
			}
			fmt.Fprintf(w, "%-60s %10d %5.1f%%\n", fmt.Sprintf("(%d more)", len(rows)-i), rest, 100*float64(rest)/float64(total))
			break
		}
		fmt.Fprintf(w, "%-60s %10d %5.1f%%\n", r.pkg, r.size, 100*float64(r.size)/float64(total))
	}
}

// module is what wasmsize reads from a binary.
type module struct {
	sections []section
	imports  int               // imported functions come first in the index space
	bodies   []int             // code size of each defined function
	names    map[uint32]string // function index → name
}

type section struct {
	name string
	size int
}

var sectionNames = []string{"custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "datacount"}

func parse(b []byte) (*module, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, errors.New("not a wasm binary")
	}
	m := &module{names: map[uint32]string{}}
	r := &reader{b: b, off: 8}
	for r.off < len(b) {
		id := r.byte()
		size := int(r.uleb())
		end := r.off + size
		if r.err != nil || end > len(b) {
			return nil, errors.New("truncated section")
		}
		sub := &reader{b: b[:end], off: r.off}
		name := "unknown"
		if int(id) < len(sectionNames) {
			name = sectionNames[id]
		}
		switch id {
		case 0:
			n := sub.name()
			name = "custom " + n
			if n == "name" {
				m.readNames(sub)
			}
		case 2:
			m.imports = countFuncImports(sub)
		case 10:
			count := int(sub.uleb())
			for i := 0; i < count && sub.err == nil; i++ {
				sz := int(sub.uleb())
				m.bodies = append(m.bodies, sz)
				sub.off += sz
			}
		}
		m.sections = append(m.sections, section{name, size})
		r.off = end
	}
	if len(m.names) == 0 {
		return m, errors.New("no name section: build without -ldflags=-s")
	}
	return m, nil
}

// readNames reads the function-names subsection of the "name" section.
func (m *module) readNames(r *reader) {
	for r.off < len(r.b) && r.err == nil {
		id := r.byte()
		size := int(r.uleb())
		end := r.off + size
		if id == 1 {
			count := int(r.uleb())
			for i := 0; i < count && r.err == nil; i++ {
				idx := uint32(r.uleb())
				m.names[idx] = r.name()
			}
		}
		r.off = end
	}
}

func countFuncImports(r *reader) int {
	count := int(r.uleb())
	funcs := 0
	for i := 0; i < count && r.err == nil; i++ {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0:
			r.uleb()
			funcs++
		case 1:
			r.byte()
			r.limits()
		case 2:
			r.limits()
		case 3:
			r.byte()
			r.byte()
		}
	}
	return funcs
}

// pkgOf returns the package of a function name in the wasm name section,
// where the linker writes "/" as "_": "oomscope_app.(*EstimatePage).Render"
// → "oomscope/app", "github.com_google_uuid.New" → "github.com/google/uuid".
// (An underscore inside a package path is shown as "/" too.)
func pkgOf(sym string) string {
	if sym == "" {
		return "(unnamed)"
	}
	start := 0
	if i := strings.IndexByte(sym, '.'); i >= 0 {
		for _, tld := range []string{".com_", ".org_", ".in_", ".io_", ".net_", ".dev_"} {
			if strings.HasPrefix(sym[i:], tld) {
				start = i + 1
			}
		}
	}
	dot := strings.IndexByte(sym[start:], '.')
	if dot < 0 {
		return sym
	}
	return strings.ReplaceAll(sym[:start+dot], "_", "/")
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) byte() byte {
	if r.off >= len(r.b) {
		r.err = io.ErrUnexpectedEOF
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) uleb() uint64 {
	v, n := binary.Uvarint(r.b[min(r.off, len(r.b)):])
	if n <= 0 {
		r.err = io.ErrUnexpectedEOF
		return 0
	}
	r.off += n
	return v
}

func (r *reader) name() string {
	n := int(r.uleb())
	if r.err != nil || r.off+n > len(r.b) {
		r.err = io.ErrUnexpectedEOF
		return ""
	}
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

func (r *reader) limits() {
	if r.byte() == 1 {
		r.uleb()
	}
	r.uleb()
}
