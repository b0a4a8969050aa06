package main

import "testing"

func TestMergeSections(t *testing.T) {
	old := "# every benchmark\n\nRun on then.\n\n## 1. One\n\nold one\n\n### sub\n\nx\n\n## 3. Three\n\nold three\n"
	got := mergeSections(old, map[string]string{
		"1": "## 1. One\n\nnew one\n",
		"2": "## 2. Two\n\nnew two\n",
		"4": "## 4. Four\n\nnew four\n",
	})
	want := "# every benchmark\n\nRun on then.\n\n## 1. One\n\nnew one\n\n## 2. Two\n\nnew two\n\n## 3. Three\n\nold three\n\n## 4. Four\n\nnew four\n"
	if got != want {
		t.Errorf("mergeSections:\n%s\nwant:\n%s", got, want)
	}
}

func TestQuietPhase(t *testing.T) {
	ms := int64(1e6)
	all := [][]start{{{at: 5_000 * ms}}, {{at: 7_100 * ms}}, {{at: 9_200 * ms}}}
	// Phases 0, 100 and 200 ms of a second: the widest gap is 200 ms to 1 s.
	if got := quietPhase(all, 1e9); got != 600*1e6 {
		t.Errorf("quietPhase = %v, want 600ms", got)
	}
}
