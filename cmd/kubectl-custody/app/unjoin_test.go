package app

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// placed places obj on the target of key as its syncer leaves it: in Sync, held by its
// syncer's finalizer and by a coordination finalizer, its removal requested.
func placed[T client.Object](obj T, key string) T {
	workloadv1alpha1.SetState(obj, key, workloadv1alpha1.ResourceStateSync)
	workloadv1alpha1.SetHold(obj, key, storagev1alpha1.HoldFinalizer, true)
	workloadv1alpha1.RequestRemoval(obj, key, time.Now())
	obj.SetFinalizers(append(obj.GetFinalizers(), workloadv1alpha1.SyncerFinalizer(key)))
	return obj
}

// claim is the hub claim ns/name.
func claim(ns, name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// partial is the metadata of the core object of kind at ns/name, as unjoin lists it.
func partial(kind, ns, name string) metav1.PartialObjectMetadata {
	p := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	p.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	return p
}

func TestHeldTypes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		synced []string
		want   []string
	}{
		{"never reported", nil, []string{"persistentvolumeclaims", "persistentvolumes", "namespaces"}},
		{"as a syncer reports them", []string{"namespaces", "persistentvolumes", "persistentvolumeclaims", "secrets", "deployments.apps", "configmaps"},
			[]string{"persistentvolumeclaims", "persistentvolumes", "configmaps", "deployments.apps", "secrets", "namespaces"}},
	} {
		if got := heldTypes(tc.synced); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestHoldings(t *testing.T) {
	c1, c2 := partial("PersistentVolumeClaim", "ns", "c1"), partial("PersistentVolumeClaim", "ns", "c2")
	ns := partial("Namespace", "", "ns")
	hs := holdings{{claimsResource, []metav1.PartialObjectMetadata{c1, c2}}, {namespacesResource, []metav1.PartialObjectMetadata{ns}}}
	if got, want := hs.summary(), "2 persistentvolumeclaims, 1 namespaces"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if got := hs.count(); got != 3 {
		t.Errorf("count %d, want 3", got)
	}
	claims, others := hs.split(claimsResource)
	if len(claims) != 2 || others.summary() != "1 namespaces" {
		t.Errorf("split: %d claims and %q, want 2 and %q", len(claims), others.summary(), "1 namespaces")
	}
	if got := (holdings{}).summary(); got != "" {
		t.Errorf("summary of nothing %q", got)
	}
}

func TestClaimState(t *testing.T) {
	vo := func(phase storagev1alpha1.VolumePhase, reason string) *storagev1alpha1.VolumeOwnership {
		return &storagev1alpha1.VolumeOwnership{Status: storagev1alpha1.VolumeOwnershipStatus{Phase: phase, Reason: reason}}
	}
	for _, tc := range []struct {
		vo   *storagev1alpha1.VolumeOwnership
		want string
	}{
		{vo(storagev1alpha1.Bound, storagev1alpha1.ReasonWaitingForDetach), "ns/c1 (Bound, WaitingForDetach)"},
		{vo(storagev1alpha1.Moving, ""), "ns/c1 (Moving)"},
		{vo("", ""), "ns/c1 (<none>)"},
		{nil, "ns/c1 (no VolumeOwnership)"},
	} {
		if got := claimState(claim("ns", "c1"), tc.vo); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

// advice ends the refusal of m1.
const advice = "nothing was removed and it stays evicting: its syncer lets go of them once it answers; " +
	"if its member is gone for good, kubectl custody fence m1 --powered-off lets its volumes move; --force removes it now and leaves its copies in the member"

func TestRefusal(t *testing.T) {
	pv := partial("PersistentVolume", "", "pv1")
	ns := partial("Namespace", "", "ns")
	others := holdings{{volumesResource, []metav1.PartialObjectMetadata{pv}}, {namespacesResource, []metav1.PartialObjectMetadata{ns}}}
	for _, tc := range []struct {
		name   string
		claims []string
		others holdings
		want   string
	}{
		{"claims and others", []string{"ns/c1 (Bound, WaitingForDetach)", "ns/c2 (no VolumeOwnership)"}, others,
			`synctarget "m1" still holds claims ns/c1 (Bound, WaitingForDetach), ns/c2 (no VolumeOwnership) and 2 other objects (1 persistentvolumes, 1 namespaces) after 5m0s`},
		{"one claim", []string{"ns/c1 (Moving)"}, others[1:],
			`synctarget "m1" still holds claim ns/c1 (Moving) and 1 other object (1 namespaces) after 5m0s`},
		{"no claims", nil, others, `synctarget "m1" still holds 2 objects (1 persistentvolumes, 1 namespaces) after 5m0s`},
	} {
		err := refusal("m1", 5*time.Minute, tc.claims, tc.others)
		if want := tc.want + "; " + advice; errorText(err) != want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, errorText(err), want)
		}
	}
}

func TestLeftoverWarning(t *testing.T) {
	c1 := partial("PersistentVolumeClaim", "ns", "c1")
	ns := partial("Namespace", "", "ns")
	for _, tc := range []struct {
		name     string
		released []metav1.PartialObjectMetadata
		want     string
	}{
		{"nothing", nil, ""},
		{"no volume", []metav1.PartialObjectMetadata{ns}, "Warning: the member of m1 keeps its copies of the 1 object released above"},
		{"a claim", []metav1.PartialObjectMetadata{c1, ns}, "Warning: the member of m1 keeps its copies of the 2 objects released above, " +
			"and the claims and PVs among them are not fenced: stop their workloads in the member before the volumes are used elsewhere"},
	} {
		if got := leftoverWarning("m1", tc.released); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got, want := located(&c1), "persistentvolumeclaim/c1 in namespace ns"; got != want {
		t.Errorf("located %q, want %q", got, want)
	}
	if got, want := located(&ns), "namespace/ns"; got != want {
		t.Errorf("located %q, want %q", got, want)
	}
}

// unjoinHubOf is a fake hub holding objs, with the hooks of funcs, that maps every kind of the
// scheme as discovery would.
func unjoinHubOf(funcs interceptor.Funcs, objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(scheme).WithRESTMapper(testrestmapper.TestOnlyStaticRESTMapper(scheme)).
		WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

// runUnjoin unjoins f.target through c, as the plugin does once connected, and returns what
// it printed on stdout and stderr.
func runUnjoin(c client.Client, f unjoinFlags) (string, string, error) {
	var out, errOut bytes.Buffer
	o := &options{streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
	err := o.unjoinHub(context.Background(), c, &f)
	return out.String(), errOut.String(), err
}

// joinedHub are the hub objects of a joined m1, evicting or not: its identity and
// SyncTarget.
func joinedHub(evicting bool) []client.Object {
	target := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: "m1"}, Spec: workloadv1alpha1.SyncTargetSpec{Evict: evicting}}
	return []client.Object{serviceAccountOf("m1").obj, bindingOf("m1").obj, tokenRoleOf("m1").obj, tokenBindingOf("m1").obj, target}
}

// heldByM1 are the namespace ns and its claim c1 placed on m1, with the claim's
// VolumeOwnership: Bound, waiting for the detach.
func heldByM1() []client.Object {
	vo := &storagev1alpha1.VolumeOwnership{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c1"},
		Status: storagev1alpha1.VolumeOwnershipStatus{Phase: storagev1alpha1.Bound, Reason: storagev1alpha1.ReasonWaitingForDetach}}
	return []client.Object{placed(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, "m1"), placed(claim("ns", "c1"), "m1"), vo}
}

// syncerLetsGo lets go of everything m1 holds, as its syncer would, once unjoin has listed
// m1's claims once.
func syncerLetsGo() interceptor.Funcs {
	var lists atomic.Int32
	return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if list.GetObjectKind().GroupVersionKind().Kind == "PersistentVolumeClaimList" && lists.Add(1) == 2 {
			for _, obj := range []client.Object{claim("ns", "c1"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}} {
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
					return err
				}
				workloadv1alpha1.Drop(obj, "m1")
				if err := c.Update(ctx, obj); err != nil {
					return err
				}
			}
		}
		return c.List(ctx, list, opts...)
	}}
}

// failsAfterFirstRead fails every read of m1's claims but the first: a read that fails must
// not count as empty, and is tried again until the timeout.
func failsAfterFirstRead() interceptor.Funcs {
	var lists atomic.Int32
	return interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if list.GetObjectKind().GroupVersionKind().Kind == "PersistentVolumeClaimList" && lists.Add(1) > 1 {
			return apierrors.NewServiceUnavailable("the hub is restarting")
		}
		return c.List(ctx, list, opts...)
	}}
}

// replacedTarget answers every read of m1 but the first with a SyncTarget of another uid, as
// when m1 is unjoined and joined again by someone else while unjoin waits.
func replacedTarget() interceptor.Funcs {
	var gets atomic.Int32
	return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if err := c.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		if t, ok := obj.(*workloadv1alpha1.SyncTarget); ok && gets.Add(1) > 1 {
			t.UID = "another"
		}
		return nil
	}}
}

// unjoin's report of the deletion of m1's identity and of m1.
const (
	identityDeleted = "serviceaccount/custody-syncer-target-m1 deleted\n" +
		"clusterrolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1 deleted\n" +
		"rolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1-token deleted\n" +
		"role.rbac.authorization.k8s.io/custody-syncer-target-m1-token deleted\n"
	revoked       = identityDeleted + "the hub identity of m1 is revoked: the hub refuses its syncer from now on\n"
	targetDeleted = "synctarget.workload.custody.dev/m1 deleted\n"
	deletedM1     = identityDeleted + targetDeleted
)

func TestUnjoin(t *testing.T) {
	joined := hubHolds(t, unjoinHubOf(interceptor.Funcs{}, joinedHub(false)...))
	for _, tc := range []struct {
		name    string
		objs    []client.Object
		funcs   interceptor.Funcs
		flags   unjoinFlags
		out     string
		errOut  string
		err     string
		remains []string
		// released: ns and c1 carry nothing of m1.
		released bool
	}{
		{
			name: "a target that holds nothing",
			objs: joinedHub(false),
			out:  "synctarget.workload.custody.dev/m1 evicting\n" + deletedM1,
		},
		{
			name: "an evicting target",
			objs: joinedHub(true),
			out:  "synctarget.workload.custody.dev/m1 already evicting\n" + deletedM1,
		},
		{
			name:     "a target whose syncer lets go",
			objs:     append(joinedHub(false), heldByM1()...),
			funcs:    syncerLetsGo(),
			flags:    unjoinFlags{timeout: time.Minute},
			out:      "synctarget.workload.custody.dev/m1 evicting\n" + deletedM1,
			errOut:   "[0s] waiting for m1 to hold nothing: 1 persistentvolumeclaims, 1 namespaces; 0 of 2 let go\n",
			released: true,
		},
		{
			name:    "a target that holds a claim",
			objs:    append(joinedHub(false), heldByM1()...),
			out:     "synctarget.workload.custody.dev/m1 evicting\n",
			err:     `synctarget "m1" still holds claim ns/c1 (Bound, WaitingForDetach) and 1 other object (1 namespaces) after 0s; ` + advice,
			remains: joined,
		},
		{
			name:    "a target that holds a claim, its reads failing",
			objs:    append(joinedHub(false), heldByM1()...),
			funcs:   failsAfterFirstRead(),
			flags:   unjoinFlags{timeout: 2 * time.Second},
			out:     "synctarget.workload.custody.dev/m1 evicting\n",
			errOut:  "[0s] waiting for m1 to hold nothing: 1 persistentvolumeclaims, 1 namespaces; 0 of 2 let go\n",
			err:     "listing persistentvolumeclaims: the hub is restarting",
			remains: joined,
		},
		{
			name:    "a target replaced while unjoin waits",
			objs:    append(joinedHub(false), heldByM1()...),
			funcs:   replacedTarget(),
			flags:   unjoinFlags{timeout: time.Minute, force: true, askFlags: askFlags{yes: true}},
			out:     "synctarget.workload.custody.dev/m1 evicting\n",
			err:     `synctarget "m1" was deleted or replaced while unjoin ran; nothing more was removed`,
			remains: joined,
		},
		{
			name:  "a target that holds a claim, forced",
			objs:  append(joinedHub(false), heldByM1()...),
			flags: unjoinFlags{force: true, askFlags: askFlags{yes: true}},
			out: "synctarget.workload.custody.dev/m1 evicting\n" + identityDeleted +
				"persistentvolumeclaim/c1 in namespace ns released\nnamespace/ns released\n" + targetDeleted,
			errOut: "Warning: the member of m1 keeps its copies of the 2 objects released above, and the claims and PVs among them are not fenced: " +
				"stop their workloads in the member before the volumes are used elsewhere\n",
			released: true,
		},
		{
			name: "a target deleted before its identity, with a legacy token",
			objs: []client.Object{serviceAccountOf("m1").obj, legacyToken("m1")},
			out:  "serviceaccount/custody-syncer-target-m1 deleted\nsecret/custody-syncer-target-m1-token deleted\nsynctarget.workload.custody.dev/m1 not found\n",
		},
		{
			name:    "a revoked target whose syncer cannot let go",
			objs:    append(joinedHub(false), heldByM1()...),
			flags:   unjoinFlags{revoke: true, askFlags: askFlags{yes: true}},
			out:     revoked + "synctarget.workload.custody.dev/m1 evicting\n",
			err:     `synctarget "m1" still holds claim ns/c1 (Bound, WaitingForDetach) and 1 other object (1 namespaces) after 0s; ` + advice,
			remains: []string{"synctarget.workload.custody.dev/m1"},
		},
		{
			name:  "a revoked target that holds nothing",
			objs:  joinedHub(false),
			flags: unjoinFlags{revoke: true, askFlags: askFlags{yes: true}},
			out:   revoked + "synctarget.workload.custody.dev/m1 evicting\n" + targetDeleted,
		},
		{
			name: "an unknown target",
			err:  `synctarget "m1" not found`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := unjoinHubOf(tc.funcs, tc.objs...)
			tc.flags.target = "m1"
			out, errOut, err := runUnjoin(c, tc.flags)
			if got := errorText(err); got != tc.err {
				t.Errorf("error %q, want %q", got, tc.err)
			}
			if out != tc.out || errOut != tc.errOut {
				t.Errorf("printed\n%s\n%s\nwant\n%s\n%s", out, errOut, tc.out, tc.errOut)
			}
			if held := hubHolds(t, c); !slices.Equal(held, tc.remains) {
				t.Errorf("the hub holds %v, want %v", held, tc.remains)
			}
			expectM1Evicting(t, c)
			expectReleased(t, c, tc.released)
		})
	}
}

// expectM1Evicting checks that m1, if it is still there, is evicting.
func expectM1Evicting(t *testing.T, c client.Client) {
	t.Helper()
	st := &workloadv1alpha1.SyncTarget{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "m1"}, st); err == nil && !st.Spec.Evict {
		t.Error("m1 is not evicting")
	}
}

// expectReleased checks whether the namespace ns and its claim c1, when they exist, carry
// nothing of m1.
func expectReleased(t *testing.T, c client.Client, released bool) {
	t.Helper()
	for _, obj := range []client.Object{claim("ns", "c1"), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}} {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
			continue
		}
		onM1 := slices.Contains(workloadv1alpha1.Targets(obj), "m1") || slices.Contains(obj.GetFinalizers(), workloadv1alpha1.SyncerFinalizer("m1")) ||
			obj.GetAnnotations()[workloadv1alpha1.FinalizersAnnotation("m1")] != ""
		if onM1 == released {
			t.Errorf("%T %s: labels %v, annotations %v, finalizers %v; want released %t", obj, obj.GetName(), obj.GetLabels(), obj.GetAnnotations(), obj.GetFinalizers(), released)
		}
	}
}

func TestUnjoinRevocationAsksFirst(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags unjoinFlags
		out   string
		err   string
	}{
		{
			name:  "not confirmed",
			flags: unjoinFlags{revoke: true},
			out:   revokeQuestion("m1") + " [y/N] ",
			err:   "not confirmed: synctarget/m1 is unchanged",
		},
		{
			name:  "with --force, one question",
			flags: unjoinFlags{revoke: true, force: true},
			out:   revokeQuestion("m1") + " " + forceQuestion("m1", 0, nil) + " [y/N] ",
			err:   "not confirmed: synctarget/m1 is unchanged",
		},
		{
			name:  "in a dry run",
			flags: unjoinFlags{revoke: true, askFlags: askFlags{dryRun: true}},
			out: strings.ReplaceAll(revoked, "\n", " (server dry run)\n") + "synctarget.workload.custody.dev/m1 evicting (server dry run)\n" +
				strings.ReplaceAll(deletedM1, "\n", " (server dry run)\n"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := unjoinHubOf(interceptor.Funcs{}, joinedHub(false)...)
			joined := hubHolds(t, c)
			tc.flags.target = "m1"
			out, _, err := runUnjoin(c, tc.flags)
			if got := errorText(err); got != tc.err {
				t.Errorf("error %q, want %q", got, tc.err)
			}
			if out != tc.out {
				t.Errorf("printed\n%s\nwant\n%s", out, tc.out)
			}
			if held := hubHolds(t, c); !slices.Equal(held, joined) {
				t.Errorf("the hub holds %v, want %v", held, joined)
			}
		})
	}
}

func TestForceQuestion(t *testing.T) {
	held := holdings{{claimsResource, []metav1.PartialObjectMetadata{partial("PersistentVolumeClaim", "ns", "c1")}}}
	const keeps = "its member keeps its copies, and the volumes among them are not fenced."
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		left    holdings
		want    string
	}{
		{"holding a claim, waiting", 5 * time.Minute, held,
			"Remove synctarget/m1 by force? It holds 1 persistentvolumeclaims. Whatever it still holds after 5m0s is taken off it: " + keeps},
		{"holding nothing, not waiting", 0, nil,
			"Remove synctarget/m1 by force? It holds nothing on the hub. Whatever it still holds now is taken off it: " + keeps},
	} {
		if got := forceQuestion("m1", tc.timeout, tc.left); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

func TestUnjoinRefusesABadName(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"unjoin", "M_1"}, genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	if want := `error: target name "M_1" is not a DNS label: `; code != 1 || out.Len() > 0 || !strings.HasPrefix(errOut.String(), want) || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want one line starting with %q", code, out.String(), errOut.String(), want)
	}
}
