package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// This file owns every --version: what the build recorded of itself. Go
// stamps it in every build (go install, go build in a checkout, release
// builds with -trimpath and -ldflags=-s -w), so no -X flag is needed.

// versionText is the line every --version prints:
//
//	every v0.3.1 (abc1234, modified) go1.26.8 linux/amd64
//
// The version is the module's (a tag, or Go's pseudo-version of the commit
// for a build in a checkout), "devel" when Go recorded none; the revision
// and the dirty flag come from the vcs.* settings, which a go install of a
// module version does not have; the platform is the build's target.
func versionText(bi *debug.BuildInfo) string {
	if bi == nil {
		return "every devel " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	var b strings.Builder
	b.WriteString("every " + v)
	if rev := set["vcs.revision"]; rev != "" {
		b.WriteString(" (" + rev[:min(len(rev), 7)])
		if set["vcs.modified"] == "true" {
			b.WriteString(", modified")
		}
		b.WriteString(")")
	}
	goVersion := bi.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	goos, goarch := set["GOOS"], set["GOARCH"]
	if goos == "" || goarch == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	b.WriteString(" " + goVersion + " " + goos + "/" + goarch)
	return b.String()
}

// version is this binary's versionText.
func version() string {
	bi, _ := debug.ReadBuildInfo()
	return versionText(bi)
}
