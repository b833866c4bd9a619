package simstorage

import (
	"errors"
	"slices"
	"strings"
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

// fencedLedger returns a ledger that knows members m1 (10.1.0.0/24) and m2 (10.2.0.0/24),
// with an owned volume "rwo".
func fencedLedger(t *testing.T) *ledger {
	t.Helper()
	l := newLedger()
	for m, cidr := range map[string]string{"m1": "10.1.0.0/24", "m2": "10.2.0.0/24"} {
		if err := l.join(m, []string{cidr}); err != nil {
			t.Fatal(err)
		}
	}
	l.create(Volume{Handle: "rwo", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}})
	return l
}

func TestLedgerFencedMembers(t *testing.T) {
	for _, tc := range []struct {
		cidrs  []string
		fenced []string
	}{
		{cidrs: []string{"10.1.0.0/24"}, fenced: []string{"m1"}},
		{cidrs: []string{"10.1.0.7/16"}, fenced: []string{"m1"}},
		{cidrs: []string{"10.0.0.0/8"}, fenced: []string{"m1", "m2"}},
		{cidrs: []string{"10.1.0.0/25"}}, // narrower than m1's nodes: not all of them are cut off
		{cidrs: []string{"10.3.0.0/24"}},
	} {
		l := fencedLedger(t)
		if err := l.fence(tc.cidrs, true); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range []string{"m1", "m2"} {
			if l.fenced(m) {
				got = append(got, m)
			}
		}
		if !slices.Equal(got, tc.fenced) {
			t.Errorf("fencing %v fenced %v, want %v", tc.cidrs, got, tc.fenced)
		}
		if err := l.fence(tc.cidrs, false); err != nil || l.fenced("m1") || l.fenced("m2") {
			t.Errorf("unfencing %v: err=%v, still fenced m1=%v m2=%v", tc.cidrs, err, l.fenced("m1"), l.fenced("m2"))
		}
	}

	l := fencedLedger(t)
	if err := l.fence([]string{"10.1.0.0/24", "not-a-cidr"}, true); err == nil || l.fenced("m1") {
		t.Fatalf("fencing with an invalid CIDR: err=%v, m1 fenced=%v", err, l.fenced("m1"))
	}
}

func TestLedgerFencedAttach(t *testing.T) {
	l := fencedLedger(t)
	if err := l.attach("m1", "pv-a", "rwo"); err != nil {
		t.Fatal(err)
	}
	if err := l.fence([]string{"10.1.0.0/24"}, true); err != nil {
		t.Fatal(err)
	}
	if err := l.attach("m1", "pv-a", "rwo"); err != nil {
		t.Fatalf("a fenced member's existing attachment: %v", err)
	}

	if err := l.attach("m2", "pv-b", "rwo"); err != nil {
		t.Fatalf("a fenced holder kept an owned volume from another member: %v", err)
	}
	if v, _ := l.volume("rwo"); !slices.Equal(v.Holders, []string{"m1", "m2"}) {
		t.Fatalf("holders: %v", v.Holders)
	}

	l.create(Volume{Handle: "other", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}})
	for range 3 {
		if err := l.attach("m1", "pv-c", "other"); !errors.Is(err, errRefused) {
			t.Fatalf("a fenced member's attach: got %v, want refused", err)
		}
	}
	if r := l.listRefusals(); len(r) != 1 || r[0].Kind != AttachFenced || r[0].Member != "m1" {
		t.Fatalf("refusals of a retried fenced attach: %+v, want one AttachFenced", r)
	}
	if err := l.check(AttachRefused, UnfencedWhileAttachedElsewhere); err != nil {
		t.Fatalf("fencing at work recorded as a violation: %v", err)
	}

	if err := l.fence([]string{"10.1.0.0/24"}, false); err != nil {
		t.Fatal(err)
	}
	err := l.check(UnfencedWhileAttachedElsewhere)
	if err == nil || !strings.Contains(err.Error(), "rwo [m1 m2]") {
		t.Fatalf("unfencing a member still attached beside another: %v", err)
	}
	if err := l.attach("m1", "pv-c", "other"); err != nil {
		t.Fatalf("attach after unfencing: %v", err)
	}
}

func TestLedgerUnfenceAfterLettingGo(t *testing.T) {
	l := fencedLedger(t)
	if err := l.attach("m1", "pv-a", "rwo"); err != nil {
		t.Fatal(err)
	}
	if err := l.fence([]string{"10.1.0.0/24"}, true); err != nil {
		t.Fatal(err)
	}
	if err := l.attach("m2", "pv-b", "rwo"); err != nil {
		t.Fatal(err)
	}
	l.detach("m1", "pv-a", "rwo")
	if err := l.fence([]string{"10.1.0.0/24"}, false); err != nil {
		t.Fatal(err)
	}
	if err := l.check(AttachRefused, UnfencedWhileAttachedElsewhere); err != nil {
		t.Fatalf("a member unfenced after letting go: %v", err)
	}
	if err := l.attach("m1", "pv-a", "rwo"); !errors.Is(err, errRefused) || l.check(AttachRefused) == nil {
		t.Fatalf("an unfenced member's attach of a volume another member holds: %v", err)
	}
}

func TestLedgerPoweredOff(t *testing.T) {
	l := fencedLedger(t)
	if err := l.attach("m1", "pv-a", "rwo"); err != nil {
		t.Fatal(err)
	}
	l.power("m1", false)
	if err := l.write("m1", "rwo", "r"); !errors.Is(err, ErrWriteRefused) {
		t.Fatalf("a write from a powered-off member: got %v, want refused", err)
	}
	if err := l.attach("m2", "pv-b", "rwo"); err != nil {
		t.Fatalf("a powered-off holder kept an owned volume from another member: %v", err)
	}
	l.power("m1", true)
	if err := l.check(UnfencedWhileAttachedElsewhere); err == nil {
		t.Fatal("powering on a member still attached beside another was not a violation")
	}
}

func TestLedgerWrites(t *testing.T) {
	l := fencedLedger(t)
	if err := l.write("m1", "rwo", "unattached"); !errors.Is(err, ErrWriteRefused) {
		t.Fatalf("write without attaching: got %v, want refused", err)
	}
	if err := l.write("m1", "missing", "x"); !errors.Is(err, ErrWriteRefused) {
		t.Fatalf("write to a volume that does not exist: got %v, want refused", err)
	}
	if err := l.attach("m1", "pv-a", "rwo"); err != nil {
		t.Fatal(err)
	}
	if err := l.write("m1", "rwo", "one"); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := l.fence([]string{"10.1.0.0/24"}, true); err != nil {
		t.Fatal(err)
	}
	if err := l.write("m1", "rwo", "fenced"); !errors.Is(err, ErrWriteRefused) {
		t.Fatalf("write while fenced: got %v, want refused", err)
	}
	if err := l.fence([]string{"10.1.0.0/24"}, false); err != nil {
		t.Fatal(err)
	}
	if err := l.write("m1", "rwo", "two"); err != nil {
		t.Fatalf("write after unfencing: %v", err)
	}
	if got := l.records("rwo"); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("records: %v", got)
	}
	var kinds []RefusalKind
	for _, r := range l.listRefusals() {
		kinds = append(kinds, r.Kind)
	}
	if want := []RefusalKind{WriteUnattached, WriteUnattached, WriteFenced}; !slices.Equal(kinds, want) {
		t.Fatalf("refusals: %v, want %v", kinds, want)
	}
	if err := l.checkWrites(); err != nil {
		t.Fatalf("writes kept: %v", err)
	}

	l.detach("m1", "pv-a", "rwo")
	if ok, _, err := l.release("m1", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-a", UID: "a"}}, "rwo"); !ok || err != nil {
		t.Fatalf("release: %v %v", ok, err)
	}
	if l.records("rwo") != nil {
		t.Fatal("a deleted volume kept its records")
	}
	if err := l.checkWrites(); err == nil || !strings.Contains(err.Error(), `lost 2 acknowledged writes, the first "one"`) {
		t.Fatalf("acknowledged writes lost with the volume: %v", err)
	}
}

// A snapshot is the storage's by its handle: the VolumeSnapshot it was cut for finds it, and
// so does any content that names the handle, until the storage deletes it.
func TestLedgerSnapshots(t *testing.T) {
	l := newLedger()
	key := snapshotKey("m2", "ns-a", "volsync-data-dst-1")
	log := []string{"record 0", "record 1"}
	l.cut(key, "snap-h", "vol-h", log)
	log[0] = "changed after the cut"
	if handle, volume, ok := l.cutFor(key); !ok || handle != "snap-h" || volume != "vol-h" {
		t.Fatalf("cutFor = %q, %q, %v; want snap-h cut from vol-h", handle, volume, ok)
	}
	if _, _, ok := l.cutFor(snapshotKey("m2", "ns-b", "volsync-data-dst-1")); ok {
		t.Fatal("a VolumeSnapshot of another namespace finds the cut")
	}
	if got, ok := l.snapshotLog("snap-h"); !ok || !slices.Equal(got, []string{"record 0", "record 1"}) {
		t.Fatalf("snapshotLog by handle = %v, %v; want the log as cut", got, ok)
	}
	if _, ok := l.snapshotLog("other"); ok {
		t.Fatal("an unknown handle has a snapshot")
	}
	l.deleteSnapshot("snap-h")
	if _, ok := l.snapshotLog("snap-h"); ok {
		t.Fatal("a deleted snapshot still restores")
	}
}
