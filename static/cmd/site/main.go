// Command site builds OOMScope's static site and serves it locally.
//
//	site build [-out dist] [-base /] [-label LABEL] [-site-url URL] [-precompress] [-brotli 11]
//	                                                  (after building dist/web/app.wasm)
//	site serve [-dir dist] [-addr 127.0.0.1:8080] [-base /]
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"

	"oomscope/static"
)

func main() {
	log.SetFlags(0)
	if len(os.Args) < 2 {
		log.Fatal("usage: site build|serve [flags]")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	switch os.Args[1] {
	case "build":
		var o static.Options
		fs.StringVar(&o.Out, "out", "dist", "output directory (must hold web/app.wasm)")
		fs.StringVar(&o.Base, "base", "/", "path the site is served under, e.g. /repo/")
		fs.StringVar(&o.Label, "label", "", "build label shown in the footer")
		fs.StringVar(&o.SiteURL, "site-url", "", "public URL of the site's root, for the sitemap and og: links")
		fs.BoolVar(&o.Precompress, "precompress", false, "write .gz (and .br) copies of text and wasm files")
		fs.IntVar(&o.Brotli, "brotli", 11, "brotli quality of the .br copies with -precompress (0: none)")
		fs.Parse(os.Args[2:])
		v, err := static.Build(o)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("site: wrote %s (version %s, base %s)\n", o.Out, v, o.Base)
	case "serve":
		dir := fs.String("dir", "dist", "directory to serve")
		addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
		base := fs.String("base", "/", "path the site is served under")
		fs.Parse(os.Args[2:])
		prefix := "/" + strings.Trim(*base, "/")
		if prefix == "/" {
			prefix = ""
		}
		srv := &static.Server{Dir: *dir, Prefix: prefix}
		fmt.Printf("site: serving %s on http://%s%s/\n", *dir, *addr, prefix)
		log.Fatal(http.ListenAndServe(*addr, srv))
	default:
		log.Fatalf("site: unknown command %q (want build or serve)", os.Args[1])
	}
}
