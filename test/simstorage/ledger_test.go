package simstorage

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLedgerAttach(t *testing.T) {
	l := newLedger()
	l.create(Volume{Handle: "rwo", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}})
	l.create(Volume{Handle: "rwx", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}})

	if err := l.attach("m1", "pv-a", "rwo"); err != nil {
		t.Fatalf("first attach: %v", err)
	}
	for range 3 {
		if err := l.attach("m2", "pv-b", "rwo"); !errors.Is(err, errRefused) {
			t.Fatalf("second member's attach of an owned volume: got %v, want refused", err)
		}
	}
	if err := l.check(AttachRefused); err == nil {
		t.Fatal("a refused attach is not recorded")
	}
	if n := len(l.violations); n != 1 {
		t.Fatalf("retries of one refused attach recorded %d times, want once", n)
	}
	if v, _ := l.volume("rwo"); len(v.Holders) != 1 || v.Holders[0] != "m1" {
		t.Fatalf("holders after the refusal: %v", v.Holders)
	}

	l.detach("m1", "other-pv", "rwo")
	if v, _ := l.volume("rwo"); len(v.Holders) != 1 {
		t.Fatal("a PV that did not attach the volume detached it")
	}
	l.see("m1", "pv-a", "rwo")
	l.see("m1", "pv-a", "") // the PV is gone: it lets go of what it attached
	if err := l.attach("m2", "pv-b", "rwo"); err != nil {
		t.Fatalf("attach after the holder let go: %v", err)
	}

	for _, m := range []string{"m1", "m2"} {
		if err := l.attach(m, "pv", "rwx"); err != nil {
			t.Fatalf("a shared volume refused %s: %v", m, err)
		}
	}
	if v, _ := l.volume("rwx"); len(v.Holders) != 2 {
		t.Fatalf("shared holders: %v", v.Holders)
	}
}

func TestLedgerRelease(t *testing.T) {
	l := newLedger()
	l.create(Volume{Handle: "h", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}})
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-a", UID: "a"}}
	if err := l.attach("m2", "pv-b", "h"); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := l.release("m1", pv, "h"); ok || !errors.Is(err, errRefused) {
		t.Fatalf("release while attached elsewhere: released=%v err=%v", ok, err)
	}
	if l.check(ReleaseRefused) == nil {
		t.Fatal("a refused release is not recorded")
	}
	l.detach("m2", "pv-b", "h")
	l.see("m2", "pv-b", "h")
	ok, refs, err := l.release("m1", pv, "h")
	if !ok || err != nil || len(refs) != 1 || refs[0] != (pvRef{"m2", "pv-b"}) {
		t.Fatalf("release: released=%v refs=%v err=%v", ok, refs, err)
	}
	if ok, _, _ := l.release("m1", pv, "h"); ok {
		t.Fatal("the same PV released the volume twice")
	}
	if err := l.attach("m2", "pv-b", "h"); !errors.Is(err, errRefused) {
		t.Fatalf("attach of a deleted volume: %v", err)
	}
	other := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-c", UID: "c"}}
	if ok, _, _ := l.release("m3", other, "h"); !ok || l.check(ReleasedTwice) == nil {
		t.Fatal("a second release of a deleted volume is not recorded")
	}
	if v, _ := l.volume("h"); v.Releases != 2 || v.Deleted.IsZero() {
		t.Fatalf("volume after releases: %+v", v)
	}
}
