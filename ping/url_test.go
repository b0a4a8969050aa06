package ping

import (
	"net/url"
	"strings"
	"testing"
)

// A ping URL whose host or port can never be reached is refused, naming the
// host and the port, never the path.
func TestCheckHost(t *testing.T) {
	tests := []struct {
		url  string
		want string // in the error; "" for none
	}{
		{url: "https://hc-ping.com/" + check},
		{url: "http://127.0.0.1:8000/ping/" + check},
		{url: "http://[::1]:8000/ping/" + check},
		{url: "http://[fe80::1%25eth0]/ping/" + check},
		{url: "http://hc-ping.com./" + check},
		{url: "http://my_host-1.example:1/" + check},
		{url: "http://bücher.example/" + check},
		{url: "http://h:65535/" + check},
		{url: "http://h:99999/" + check, want: `port "99999" is out of range 1-65535 (host "h:99999")`},
		{url: "http://h:0/" + check, want: `port "0" is out of range`},
		{url: "http://:8000/" + check, want: `no host name in host ":8000"`},
		{url: "http://a..b/" + check, want: `host "a..b" is not a valid host name`},
		{url: "http://-a.example/" + check, want: `is not a valid host name`},
		{url: "http://" + strings.Repeat("x", 64) + ".example/" + check, want: `is not a valid host name`},
		{url: "http://" + strings.Repeat("x.", 127) + "xx/" + check, want: `is not a valid host name`},
		{url: "http://999.1.1.1/" + check, want: `host "999.1.1.1" is not a valid host name`},
		{url: "http://a!b/" + check, want: `is not a valid host name`},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		err = CheckHost(u)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckHost(%s) = %v, want nil", tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckHost(%s) = %v, want %q", tt.url, err, tt.want)
		case err != nil && strings.Contains(err.Error(), check):
			t.Errorf("CheckHost(%s) = %v: the path is in the message", tt.url, err)
		}
	}
}
