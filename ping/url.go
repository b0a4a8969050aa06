package ping

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// CheckHost returns why a ping URL's host or port can never be reached, or
// nil: a port outside 1-65535, no host name, or a host name that no
// resolver takes (an empty label, one over 63 bytes, a character no DNS
// name has). Such a URL would fail at every ping, forever; it is refused
// at start-up instead. The message names the host and port, never the
// path, which is the check's secret.
func CheckHost(u *url.URL) error {
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is out of range 1-65535 (host %q)", p, u.Host)
		}
	}
	host := u.Hostname()
	switch {
	case host == "":
		return fmt.Errorf("no host name in host %q", u.Host)
	case strings.Contains(host, ":"):
		return nil // an IPv6 address, which url.Parse has checked
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	if !domainName(host) {
		return fmt.Errorf("host %q is not a valid host name", u.Host)
	}
	return nil
}

// domainName reports whether a resolver takes name, by the rules of Go's
// own: labels of letters, digits, '_' and '-' (not first or last), 1 to 63
// bytes each, 253 in all (a final dot aside), not all of it digits. Bytes
// beyond ASCII are let through: net/http sends such a name in its IDNA
// form.
func domainName(name string) bool {
	name = strings.TrimSuffix(name, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	numeric := true
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := range len(label) {
			switch c := label[i]; {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-', c >= 0x80:
				numeric = false
			default:
				return false
			}
		}
	}
	return !numeric
}
