package cc

import (
	"slices"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	want := []string{NameBALIA, NameLIA, NameNone, NameOLIA, NameRenoFriendly}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		c, err := New(n)
		if err != nil || c.Name() != n {
			t.Errorf("New(%q) = %v, %v; want a rule named %q", n, c, err, n)
		}
	}
	if c, err := New(""); err != nil || c.Name() != DefaultName {
		t.Errorf(`New("") = %v, %v; want %s`, c, err, DefaultName)
	}
	_, err := New("cubic")
	if err == nil || !strings.Contains(err.Error(), `"cubic"`) || !strings.Contains(err.Error(), "olia") {
		t.Errorf(`New("cubic") error = %v; want one naming the bad name and the known ones`, err)
	}
}
