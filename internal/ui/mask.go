package ui

import (
	"regexp"
	"strings"
	"sync"
)

// urlPattern finds what may be a URL in a command line: a scheme, "://",
// and what follows up to a blank, a quote or an angle bracket.
var urlPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>]+`)
})

// Masked stands where MaskURLs cut a secret out.
const Masked = "…"

// maskedPart is the shortest path segment MaskURLs cuts out: a check's
// UUID, a key or a token is far longer, and shorter segments (/api, /v1,
// /health) say what the URL is for. The ping's messages cut out the same.
const maskedPart = 8

// MaskURLs returns s, a command line to show, with the secrets of the URLs
// in it masked, as every's logs never show them (a --store's password, a
// --ping's path): a user and password become ***, each path segment of 8
// bytes or more and each query value become …, and a fragment goes.
// https://user:pw@hc-ping.com/0f2c.../fail?rid=42 is shown as
// https://***@hc-ping.com/…/fail?rid=….
func MaskURLs(s string) string {
	return urlPattern().ReplaceAllStringFunc(s, maskURL)
}

// maskURL masks one URL, as MaskURLs says.
func maskURL(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	rest, fragment, hasFragment := strings.Cut(rest, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	authority, path, hasPath := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = "***" + authority[i:]
	}
	var b strings.Builder
	b.WriteString(scheme + "://" + authority)
	if hasPath {
		segments := strings.Split(path, "/")
		for i, seg := range segments {
			if len(seg) >= maskedPart {
				segments[i] = Masked
			}
		}
		b.WriteString("/" + strings.Join(segments, "/"))
	}
	if hasQuery {
		params := strings.Split(query, "&")
		for i, p := range params {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" {
				params[i] = k + "=" + Masked
			} else if !ok && len(p) >= maskedPart {
				params[i] = Masked
			}
		}
		b.WriteString("?" + strings.Join(params, "&"))
	}
	if hasFragment {
		b.WriteString("#")
		if fragment != "" {
			b.WriteString(Masked)
		}
	}
	return b.String()
}

// CommandText is a command's words as every shows them (every jobs --check,
// the --listen page): the secrets of their URLs masked (MaskURLs), each word
// that sh would read as more than itself quoted for sh, and control
// characters and bytes not UTF-8 escaped (Escape). Other secrets a command
// line holds (a password as an argument) are shown: keep them in the
// environment or a file.
func CommandText(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		w = MaskURLs(w)
		if w == "" || strings.ContainsFunc(w, func(r rune) bool { return !shellSafe(r) }) {
			w = "'" + strings.ReplaceAll(Escape(w), "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

// shellSafe reports whether sh reads r as itself, outside quotes (… is a
// masked part, shown as it is).
func shellSafe(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-…", r)
}
