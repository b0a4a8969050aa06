package scripttest

import "testing"

// Without chromium, [chromium] skips the browser's scripts, unless
// EVERY_REQUIRE_CHROMIUM=1 (CI), where it fails them.
func TestChromiumCondition(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("EVERY_REQUIRE_CHROMIUM", "")
	if ok, err := chromiumCondition(); ok || err != nil {
		t.Errorf("no chromium: %v, %v; want a skip", ok, err)
	}
	t.Setenv("EVERY_REQUIRE_CHROMIUM", "1")
	if ok, err := chromiumCondition(); ok || err == nil {
		t.Errorf("no chromium and EVERY_REQUIRE_CHROMIUM=1: %v, %v; want an error", ok, err)
	}
}
