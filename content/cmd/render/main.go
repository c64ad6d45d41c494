// Command render writes content/rendered/<slug>.html for every guide in
// content/guides. Run it with go generate ./content.
package main

import (
	"log"
	"os"
	"path/filepath"

	"strings"

	"oomscope/content/internal/render"
)

func main() {
	entries, err := os.ReadDir("guides")
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		// Same naming rule as content.SplitName, which cannot be imported
		// here: package content embeds the files this command writes.
		base, isMD := strings.CutSuffix(e.Name(), ".md")
		_, slug, ok := strings.Cut(base, "-")
		if !isMD || !ok || slug == "" {
			log.Fatalf("guide file %q is not named <order>-<slug>.md", e.Name())
		}
		src, err := os.ReadFile(filepath.Join("guides", e.Name()))
		if err != nil {
			log.Fatal(err)
		}
		html, err := render.HTML(src)
		if err != nil {
			log.Fatalf("%s: %v", e.Name(), err)
		}
		if err := os.WriteFile(filepath.Join("rendered", slug+".html"), html, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
