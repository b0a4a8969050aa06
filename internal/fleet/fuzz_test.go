package fleet

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// storeSeeds are --store values with passwords that are hard to hide:
// characters URLs give a meaning to, escapes, unicode, and URLs that do not
// parse or that go-redis refuses.
var storeSeeds = []string{
	"", "redis://", "rediss://", "redis:", "redis", "http://u:secret@host:6379/0",
	"redis://localhost:6379/0", "redis://localhost/0", "redis://localhost", "redis://:6379", "redis://[::1]:6379/1",
	"rediss://u:s3cretpw@host:6380/2", "redis://u:s3cretpw@host/0?prefix=jobs:", "redis://u:s3cretpw@host/0?prefix=",
	"redis://:s3cretpw@host:6379/0?prefix=a@b", "redis://user@host:6379/0", "redis://:@host:6379/0",
	"redis://u:p%40ss%3Aw%2Frd@host:6379/0", "redis://u:p@ss@host:6379/0", "redis://u:p@ss:w@host:6379/0",
	"redis://u:pässwörd€@host:6379/0", "redis://u:p%zzword@host:6379/0", "redis://u:pass%word@host:6379/0",
	"redis://u:s3cretpw@host:notaport/0", "redis://u:s3cretpw@host:6379/notadb", "redis://u:s3cretpw@host:6379/0/1",
	"redis://u:s3cretpw@host:6379/0?dial_timeout=abc", "redis://u:s3cretpw@host:6379/0?nosuchoption=1",
	"redis://u:s3cretpw@host:6379/0?max_retries=x", "redis://u:s3cretpw@host:99999/0", "redis://u:s3cretpw@ho st:6379/0",
	"redis://u:s3cretpw@host:6379/0#frag", "redis://u:s3cretpw@[::1:6379/0", "redis://u:s3cret\x7fpw@host/0",
	"redis://u:s3cretpw@host:6379/s3cretpw", "redis://s3cretpw:s3cretpw@s3cretpw:6379/0",
	"unix://u:s3cretpw@/tmp/redis.sock", "redis:u:s3cretpw@host:6379/0", "redis:///u:s3cretpw@host",
	// Unescaped characters that end the userinfo early: the URL does not
	// parse as the user meant it, and must still not show the password.
	"redis://:abc/def@host:6379/0", "redis://u:abc/def@host:6379/0", "redis://:1234/secret@host:6379/0",
	"redis://u:abc?def@host:6379/0", "redis://u:abc#def@host:6379/0", "redis://u:abc def@host:6379/0",
	// Text of its own in the URL is not taken for a broken message.
	"%!<nil>", "redis://h/%!<nil>", "redis://u:%!<nil>@h",
}

// FuzzOpenFleet checks Open on any --store value: no panic; no
// password in the error nor in the server name shown in messages, whether
// url.Parse finds it or the user meant it (after the scheme, between a ':'
// and the last '@'); an error says what is wrong; what it accepts names a
// host and a port a server can have. Open does not connect; the client
// it makes is closed.
func FuzzOpenFleet(f *testing.F) {
	for _, s := range storeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		fl, err := openRedis(raw)
		shown := ""
		if err != nil {
			shown = err.Error()
		} else {
			shown = fl.server + " " + fl.prefix
			fl.client.Close()
		}
		for _, p := range secrets(raw) {
			if strings.Trim(p, "*") == "" || strings.Contains(p, "***") {
				continue // "***" is what hides a password
			}
			if leaks(p, shown, raw) {
				t.Errorf("Open(%q) shows the password %q: %s", raw, p, shown)
			}
			if msg := NoPassword("redis said "+p+" twice: "+p, raw); knownPassword(raw, p) && strings.Contains(msg, p) {
				t.Errorf("NoPassword left %q in %q", p, msg)
			}
		}
		// What Open adds to the URL it quotes (which may hold anything).
		// (Unless the URL holds those words itself: go-redis quotes its parts.)
		if said := strings.Replace(shown, fmt.Sprintf("%q", redactURL(raw)), "", 1); !strings.Contains(raw, "<nil>") &&
			!strings.Contains(raw, "%!") && (strings.Contains(said, "<nil>") || strings.Contains(said, "%!")) {
			t.Errorf("Open(%q): message without its reason: %s", raw, shown)
		}
		if err == nil {
			u, perr := url.Parse(raw)
			if perr != nil || u.Opaque != "" {
				t.Fatalf("Open(%q) accepted a URL without \"//\" (%v): %s", raw, perr, shown)
			}
			if p := u.Port(); p != "" {
				if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
					t.Errorf("Open(%q) accepted port %q", raw, p)
				}
			}
		}
	})
}

// secrets are the passwords in raw: the one url.Parse finds, and the one the
// user meant: after the scheme and "//", from the first ':' to the last '@'.
func secrets(raw string) []string {
	var ps []string
	if u, err := url.Parse(raw); err == nil {
		if p, ok := u.User.Password(); ok {
			ps = append(ps, p)
		}
	}
	rest := raw
	if m := schemePart.FindString(raw); m != "" {
		rest = strings.TrimPrefix(raw[len(m):], "//")
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if _, p, ok := strings.Cut(rest[:at], ":"); ok {
			ps = append(ps, p)
			if q, err := url.PathUnescape(p); err == nil {
				ps = append(ps, q)
			}
		}
	}
	return ps
}

// schemePart is a URL's scheme and its colon.
var schemePart = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// knownPassword reports whether p is the password url.Parse finds in raw.
func knownPassword(raw, p string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	q, ok := u.User.Password()
	return ok && q == p
}

// leaks reports whether shown carries the password p of raw. A short one
// could be there by chance, and one that is also the user, the host, a part
// of the path or of a message would be there anyway: both are taken as no
// leak, by comparing with the same URL with its password replaced.
func leaks(p, shown, raw string) bool {
	if len([]rune(p)) < 3 || !strings.Contains(shown, p) {
		return false
	}
	const stand = "\x00pw\x00"
	other := strings.Replace(raw, p, stand, 1)
	if esc := url.PathEscape(p); other == raw && strings.Contains(raw, esc) {
		other = strings.Replace(raw, esc, stand, 1)
	}
	if other == raw {
		return true // p is not in raw as written: nothing else can explain it
	}
	return !strings.Contains(strings.ReplaceAll(other, stand, ""), p) &&
		!strings.Contains(strings.ReplaceAll(fleetText(other), stand, ""), p)
}

// fleetText is what Open lets a user see of raw: the error, or the
// server and prefix of the fleet.
func fleetText(raw string) string {
	fl, err := openRedis(raw)
	if err != nil {
		return err.Error()
	}
	defer fl.client.Close()
	return fl.server + " " + fl.prefix
}
