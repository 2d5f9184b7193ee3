package domain

import (
	"errors"
	"testing"
	"time"
)

func TestBelievedLookupCachesForItsLifetime(t *testing.T) {
	var b Believed[int]
	loads := 0
	load := func(prev int, had bool) (int, bool, error) { loads++; return prev + 1, true, nil }
	t0 := time.Unix(1000, 0)
	if v, ok, err := b.Lookup("k", t0, time.Second, load); v != 1 || !ok || err != nil {
		t.Fatalf("first lookup = %d %v %v", v, ok, err)
	}
	if v, _, _ := b.Lookup("k", t0.Add(999*time.Millisecond), time.Second, load); v != 1 || loads != 1 {
		t.Fatalf("within the lifetime: value %d after %d loads, want 1 after 1", v, loads)
	}
	// Stale: loaded again, with the previous value handed to load.
	if v, _, _ := b.Lookup("k", t0.Add(time.Second), time.Second, load); v != 2 || loads != 2 {
		t.Fatalf("after the lifetime: value %d after %d loads, want 2 after 2", v, loads)
	}
}

func TestBelievedNotFoundAndErrorsAreNotCached(t *testing.T) {
	var b Believed[string]
	t0 := time.Unix(1000, 0)
	b.Lookup("k", t0, time.Minute, func(string, bool) (string, bool, error) { return "v", true, nil })
	// A stale entry whose load says not found is forgotten.
	if _, ok, _ := b.Lookup("k", t0.Add(time.Hour), time.Minute,
		func(string, bool) (string, bool, error) { return "", false, nil }); ok {
		t.Fatal("not found answered found")
	}
	boom := errors.New("boom")
	_, _, err := b.Lookup("k", t0.Add(time.Hour), time.Minute, func(_ string, had bool) (string, bool, error) {
		if had {
			t.Error("a forgotten key was handed to load as had")
		}
		return "x", true, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if found, _ := b.Update("k", func(*string) bool { return true }); found {
		t.Fatal("a failed load was cached")
	}
}

func TestBelievedNoLifetimeCachesNothing(t *testing.T) {
	var b Believed[int]
	b.Lookup("k", time.Now(), 0, func(int, bool) (int, bool, error) { return 1, true, nil })
	if found, _ := b.Update("k", func(*int) bool { return true }); found {
		t.Fatal("ttl 0 cached a value")
	}
}

func TestBelievedUpdateAndForgetIf(t *testing.T) {
	var b Believed[int]
	now := time.Now()
	for _, k := range []string{"a", "b", "c"} {
		v := len(k) + int(k[0])
		b.Lookup(k, now, time.Hour, func(int, bool) (int, bool, error) { return v, true, nil })
	}
	if found, changed := b.Update("a", func(v *int) bool { *v = 7; return true }); !found || !changed {
		t.Fatalf("update a = %v %v", found, changed)
	}
	if found, changed := b.Update("b", func(*int) bool { return false }); !found || changed {
		t.Fatalf("declined update b = %v %v", found, changed)
	}
	v, _, _ := b.Lookup("a", now, time.Hour, func(int, bool) (int, bool, error) { return -1, true, nil })
	if v != 7 {
		t.Fatalf("a = %d after update, want 7", v)
	}
	b.ForgetIf(func(v int) bool { return v == 7 })
	if found, _ := b.Update("a", func(*int) bool { return false }); found {
		t.Fatal("ForgetIf kept a")
	}
	if found, _ := b.Update("c", func(*int) bool { return false }); !found {
		t.Fatal("ForgetIf removed c")
	}
}
