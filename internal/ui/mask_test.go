package ui

import "testing"

func TestMaskURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"curl -fsS https://hc-ping.com/0f2c5a7e-6d61-4c6f-9a6a-2f3d4c5b6a7e", "curl -fsS https://hc-ping.com/…"},
		{"curl https://hc-ping.com/0f2c5a7e-6d61-4c6f/fail?rid=42&create=1", "curl https://hc-ping.com/…/fail?rid=…&create=…"},
		{"x redis://user:p%40ss@db:6379/0 y", "x redis://***@db:6379/0 y"},
		{"curl http://localhost:8080/health", "curl http://localhost:8080/health"},
		{"wget 'https://a.example/v1/reports/Zm9vYmFyYmF6cXV4?download#top' -O x", "wget 'https://a.example/v1/reports/…?…#…' -O x"},
		{`a "https://x.example/?token=abc" b`, `a "https://x.example/?token=…" b`},
		{"https://x.example/?dl&verbose", "https://x.example/?dl&verbose"},
		{"https://x.example/#", "https://x.example/#"},
		{"no url here: host:80/path, ftp:/x", "no url here: host:80/path, ftp:/x"},
		{"two: http://a/longsecretpart and https://u@b/c", "two: http://a/… and https://***@b/c"},
	}
	for _, tt := range tests {
		if got := MaskURLs(tt.in); got != tt.want {
			t.Errorf("MaskURLs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCommandText(t *testing.T) {
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"./sync.sh", "--full", "a=b", "x@y:1,2%"}, "./sync.sh --full a=b x@y:1,2%"},
		{[]string{"sh", "-c", "echo 'hi' | x"}, `sh -c 'echo '\''hi'\'' | x'`},
		{[]string{"", "a b", "$HOME", "*"}, `'' 'a b' '$HOME' '*'`},
		{[]string{"tab\there", "bad\xff", "é"}, `'tab\there' 'bad\xff' 'é'`},
		// Masked as every jobs --check and the --listen page show it alike.
		{[]string{"curl", "https://x.io/abcdefghij"}, "curl https://x.io/…"},
	}
	for _, tt := range tests {
		if got := CommandText(tt.words); got != tt.want {
			t.Errorf("CommandText(%q) = %s, want %s", tt.words, got, tt.want)
		}
	}
}
