package cli

import "testing"

func TestNagiosAsked(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		env  string // EVERY_NAGIOS
		want bool
	}{
		{[]string{"status", "--nagios", "--bogus"}, "", true},
		{[]string{"status", "--bogus", "--nagios"}, "", true},
		{[]string{"status", "-nagios"}, "", true},
		{[]string{"status", "--nagios=true", "--max-age", "x"}, "", true},
		{[]string{"status", "--nagios=maybe"}, "", true},
		{[]string{"status", "--nagios=false", "--bogus"}, "", false},
		{[]string{"--state-dir", "d", "status", "--nagios"}, "", true},
		{[]string{"--nagios", "status", "--max-age", "1h"}, "", true}, // misplaced: a usage error, in the plugin's line
		{[]string{"--state-dir", "status", "status", "--nagios"}, "", true},
		{[]string{"status", "--state-dir", "--nagios", "x"}, "", false}, // a directory named --nagios
		{[]string{"status", "--", "--nagios"}, "", false},               // a job named --nagios
		{[]string{"status", "--bogus"}, "", false},
		{[]string{"status", "--bogus"}, "1", true},
		{[]string{"status", "--bogus"}, "false", false},
		{[]string{"status", "--nagios=false"}, "1", false},
		{[]string{"1s", "--", "status", "--nagios"}, "", false}, // a command named status
		{[]string{"1s", "status", "--nagios"}, "", false},
		{[]string{"next", "--nagios"}, "", false},
		{nil, "1", false},
	} {
		env := func(name string) string {
			if name == "EVERY_NAGIOS" {
				return tc.env
			}
			return noEnv(name)
		}
		if got := NagiosAsked(tc.args, env); got != tc.want {
			t.Errorf("NagiosAsked(%q, EVERY_NAGIOS=%q) = %v, want %v", tc.args, tc.env, got, tc.want)
		}
	}
}
