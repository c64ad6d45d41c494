package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is stamped at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return exitBadInput
	}
	v := versionString()
	if *asJSON {
		json.NewEncoder(stdout).Encode(map[string]string{"version": v, "go": runtime.Version()})
		return exitOK
	}
	fmt.Fprintf(stdout, "oomscope %s (%s)\n", v, runtime.Version())
	return exitOK
}

// versionString is the stamped version, or the module version of a go
// install, or "dev".
func versionString() string {
	if version == "dev" {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			return bi.Main.Version
		}
	}
	return version
}
