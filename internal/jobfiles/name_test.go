package jobfiles

import (
	"strings"
	"testing"
)

func TestJobName(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		// printf './sync-ledger.sh\0--full' | sha256sum | cut -c1-8
		{[]string{"./sync-ledger.sh", "--full"}, "sync-ledger.sh-69eaee19"},
		{[]string{"/usr/bin/date"}, "date-45cd0e43"},
		{[]string{"my job!"}, "my_job_-3f856358"},
		// printf ./.hidden | sha256sum
		{[]string{"./.hidden"}, "hidden-454ba35e"}, // a name starts with a letter or digit
		{[]string{"/usr/bin/..."}, "job-28ea8a67"}, // nothing left: "job"
	}
	for _, tt := range tests {
		if got := Name(tt.argv); got != tt.want {
			t.Errorf("Name(%q) = %q, want %q", tt.argv, got, tt.want)
		}
		if err := CheckName(Name(tt.argv)); err != nil {
			t.Errorf("Name(%q) is not a valid name: %v", tt.argv, err)
		}
	}
	if long := Name([]string{strings.Repeat("x", 300)}); len(long) != MaxName {
		t.Errorf("a 300-byte command makes a %d-byte name, want %d", len(long), MaxName)
	}
	if Name([]string{"a", "b"}) == Name([]string{"a b"}) {
		t.Error("argv [a b] and [a b] as one word share a name")
	}
}

func TestCronName(t *testing.T) {
	tests := []struct {
		word, schedule, command string
		want                    string
	}{
		// printf '0 0-21/3 * * *\0cmd' | sha256sum | cut -c1-8: the
		// every-90-minutes idiom is two jobs.
		{"cmd", "0 0-21/3 * * *", "cmd", "cmd-f9d140cb"},
		{"cmd", "30 1-22/3 * * *", "cmd", "cmd-cb9c93c0"},
		// printf '17 * * * *\0cd / && run-parts --report /etc/cron.hourly' | sha256sum
		{"cd", "17 * * * *", "cd / && run-parts --report /etc/cron.hourly", "cd-12f8dd44"},
		{"(", "17 * * * *", "cd / && run-parts --report /etc/cron.hourly", "job-12f8dd44"},
	}
	for _, tt := range tests {
		got := CronName(tt.word, tt.schedule, tt.command)
		if got != tt.want {
			t.Errorf("CronName(%q, %q, %q) = %q, want %q", tt.word, tt.schedule, tt.command, got, tt.want)
		}
		if err := CheckName(got); err != nil {
			t.Errorf("CronName(%q, ...) is not a valid name: %v", tt.word, err)
		}
	}
	if CronName("a", "* * * * *", "b") == CronName("a", "* * * *", "* b") {
		t.Error("a schedule's last field and the command's first word hash alike")
	}
}
