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
